package emulator

import (
	"fmt"

	"github.com/anestar/anestar/mil"
)

// The compile passes. compiler.passes runs them in order; nodes.go holds the rewrite passes' nodes and
// the liveness pass.

// compileFunc builds the kernel of main function fn with buffers from arena ar.
func compileFunc(fn *mil.Func, w mil.Weights, opts Options, ar *arena) (*Kernel, error) {
	return compileIn(fn, w, opts, true, ar)
}

// compileWith is compileFunc with an arena of its own, with op chains fused into single steps or not.
func compileWith(fn *mil.Func, w mil.Weights, opts Options, fuse bool) (*Kernel, error) {
	return compileIn(fn, w, opts, fuse, newArena())
}

// compileIn is compileWith with buffers from ar. On failure the buffers it took go back.
func compileIn(fn *mil.Func, w mil.Weights, opts Options, fuse bool, ar *arena) (*Kernel, error) {
	if err := checkMemory(fn); err != nil {
		return nil, err
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	k, err := compilePlan(fn, w, opts, fuse, ar, nil)
	ar.rec.compiled()
	if err != nil {
		return nil, err
	}
	k.w, k.opts, k.fuse = w, opts, fuse
	return k, nil
}

// compilePlan compiles fn's plan, on the surfaces g gives (new ones when g is nil), by running the
// passes. On failure what it took goes back, except g's surfaces and constants.
func compilePlan(fn *mil.Func, w mil.Weights, opts Options, fuse bool, ar *arena, g *given) (*Kernel, error) {
	c := &compiler{
		source: source{fn: fn, w: w, opts: opts, noFuse: !fuse},
		build:  build{env: map[string]*tensor{}, concatParts: map[*tensor][]*tensor{}, constT: map[string]*tensor{}},
		memory: memory{ar: ar, rec: ar.rec, fill: map[*scratch]int{}},
		ports:  ports{given: g},
	}
	k, err := c.passes()
	if err != nil {
		var bytes [][]byte
		for _, m := range c.mems {
			bytes = append(bytes, m.Release())
		}
		ar.rec.give(c.owned, bytes) // its own buffers: g's constants are not among them
		ar.release(c.scratch)
		return nil, err
	}
	return k, nil
}

// passes runs the compile passes on c.fn, in order, and returns the kernel they make. Each says what
// it needs of the passes before it and what it makes. The rewrite passes (3 to 5) and chainSteps run
// only in a fused compile that does not check numerics: a numerics check names the first op whose
// result is not finite, so every op is a step of its own.
func (c *compiler) passes() (*Kernel, error) {
	// 1. canonical (canon.go), in a fused compile, needs the function as written and makes the
	// function every later pass compiles, its data movement in the forms the rewrites know. A
	// binding's plan (given) compiles its kernel's function, which is canonical already.
	if !c.noFuse && c.given == nil {
		c.fn = canonical(c.fn)
	}
	c.consts = c.fn.Consts()
	k := &Kernel{fp16: c.opts.Numerics == FP16, check: c.opts.CheckNumerics, ar: c.ar, fn: c.fn}
	k.Binding.k = k
	// 2. compileInputs makes the input surfaces and the tensors the ops read them as.
	if err := c.compileInputs(k); err != nil {
		return nil, err
	}
	c.rw = newRewriter(&c.source)
	if !c.noFuse && !c.opts.CheckNumerics {
		c.rw.g = newGraph(c.fn)
		// 3. fuseChains (fuse.go) needs the graph of the function's values and makes a fused node of
		// each chain that runs as one step, an inner node of each of the chain's other ops.
		c.rw.fuseChains()
		// 4. foldTransposes (fuse_transpose.go) needs the fused nodes, whose ops it leaves alone, and
		// makes a folded node of each transpose that the matmuls reading it read through, a fused node
		// of each matmul that a transpose alone reads.
		c.rw.foldTransposes()
		// 5. findViews (inplace.go) needs every node's kind (folded transposes' readers read through
		// them; ops in fused nodes are not binary readers) and gives each node whose result all its
		// readers can read in place their uses (views).
		c.rw.findViews()
	}
	// 6. liveness (nodes.go) needs every node and makes the last use of each value, by which the
	// planner (plan.go) frees buffers. Nothing else sets last uses.
	c.plan = newPlanner(liveness(c.fn, c.rw.nodes), c.newScratch, c.rec.spoil)
	// 7. buildSteps needs the nodes and the planner and makes the steps: an op compiles on its own
	// (opTable), a fused node with its chain's builder, inner and folded nodes to nothing, and an
	// output concat (or a cast of one) to a value written from its parts (output_concat.go).
	used := usedNames(c.fn)
	if err := c.buildSteps(k, used); err != nil {
		return nil, err
	}
	// 8. compileOutputs needs the values the build pass defined (and the parts of the concats it
	// recorded, concatParts) and makes the output surfaces, the transfers and the kernel's steps.
	if err := c.compileOutputs(k, used); err != nil {
		return nil, err
	}
	// 9. chainSteps (chain.go) needs the steps and runs runs of elementwise ones as one.
	if !c.noFuse && !c.opts.CheckNumerics {
		k.steps = chainSteps(k.steps)
	}
	k.mems, k.owned, k.scratch, k.consts = c.mems, c.owned, c.scratch, c.constT
	if t := c.opts.OpTimes; t != nil {
		k.times = t.register(c.fn, k.steps)
	}
	return k, nil
}

// compileInputs is the inputs pass: it makes k's input surfaces (given or new) and the tensors the
// ops read them as, read in place (alias.go) or filled from the surface at the start of each Eval.
func (c *compiler) compileInputs(k *Kernel) error {
	for _, in := range c.fn.Inputs {
		if in == nil {
			return fmt.Errorf("main: nil input")
		}
		s, err := c.surface(len(k.ins), true, in.Name, in.Type)
		if err != nil {
			return fmt.Errorf("%s: input %s: %w", in.Pos, in.Name, err)
		}
		// Read in place (alias.go), or filled from the surface at the start of each Eval: shared scratch.
		data := c.aliasInput(s)
		if data == nil || len(data) != max(in.Type.NumElements(), 0) {
			data = c.newScratch(max(in.Type.NumElements(), 0))
		} else {
			k.inPlace = true
			if c.aliased == nil {
				c.aliased = map[int]bool{}
			}
			c.aliased[len(k.ins)] = true
		}
		t := &tensor{name: in.Name, shape: append([]int{}, in.Type.Shape...), dtype: in.Type.DType, data: data}
		c.env[in.Name] = t
		if c.inputs == nil {
			c.inputs = map[*tensor]bool{}
		}
		c.inputs[t] = true
		k.ins = append(k.ins, s)
		k.inT = append(k.inT, t)
	}
	return nil
}

// buildSteps is the build pass: it compiles each node into its step (none for inner and folded nodes,
// output concats and their casts), with buffers from the planner, and adds its FLOPs to k's. used
// holds the names the ops read.
func (c *compiler) buildSteps(k *Kernel, used map[string]bool) error {
	fn, nodes := c.fn, c.rw.nodes
	outputs := map[string]bool{}
	for _, ref := range fn.Outputs {
		outputs[ref.Name] = true
	}
	casts, castDone := outputCasts(fn, outputs, used), map[int]bool{}
	if !c.noFuse && !c.opts.CheckNumerics {
		c.plan.slots = c.concatTargets(outputs, used, casts)
	}
	for i, op := range fn.Ops {
		if op == nil || nodes[i].kind == innerNode || nodes[i].kind == foldedNode {
			continue
		}
		c.plan.release(i)
		if op.Kind == "const" {
			if err := c.constOp(op); err != nil {
				return err
			}
			continue
		}
		if t, ok := c.outputConcat(op, outputs, used); ok {
			c.env[t.name] = t
			continue
		}
		if j, ok := casts[i]; ok && nodes[i].kind == opNode && nodes[j].kind == opNode {
			if t, ok := c.castConcat(op, fn.Ops[j]); ok {
				c.env[t.name] = t
				castDone[j] = true
				continue
			}
		}
		if castDone[i] {
			continue // defined with its concat
		}
		build, ok := opTable[op.Kind]
		if f := nodes[i].fused; f != nil {
			build, ok = func(c *compiler, _ *mil.Op) (step, error) { return f.build(c) }, true
		}
		if !ok {
			return unsupported(op)
		}
		s, err := build(c, op)
		if err != nil {
			return err
		}
		s.op = op
		c.add(s)
		k.flops += s.flops
	}
	return nil
}

// compileOutputs is the outputs pass: it makes k's output surfaces (given or new), the transfers of
// every port, and k's steps, without those of output concats written from their parts. used holds
// the names the ops read.
func (c *compiler) compileOutputs(k *Kernel, used map[string]bool) error {
	fn := c.fn
	elide := map[*tensor]bool{} // output concats written from their parts
	for _, ref := range fn.Outputs {
		t, ok := c.env[ref.Name]
		if !ok {
			return fmt.Errorf("%s: output %q is not defined", ref.Pos, ref.Name)
		}
		typ := mil.Tensor(t.dtype, t.shape...)
		s, err := c.surface(len(k.outs), false, ref.Name, typ)
		if err != nil {
			return fmt.Errorf("%s: output %s: %w", ref.Pos, ref.Name, err)
		}
		k.outs = append(k.outs, s)
		k.outT = append(k.outT, t)
		segs := []ioPiece{{data: t.data}}
		if parts := c.concatParts[t]; parts != nil && !used[ref.Name] {
			segs = segs[:0]
			off := 0
			for _, p := range parts {
				segs = append(segs, ioPiece{data: p.data, off: off})
				off += len(p.data) * s.ElemSize()
			}
			elide[t] = true
		}
		k.outSegs = append(k.outSegs, segs)
		k.outX = append(k.outX, newTransfer(s, segs, false))
	}
	var dropped map[*gather]bool
	k.inSegs, dropped = c.inputWindows(k, c.steps)
	for i, s := range k.ins {
		if c.aliased[i] {
			k.inX = append(k.inX, newTransfer(s, nil, true)) // the memory's lock alone: the plan reads it in place
			continue
		}
		k.inX = append(k.inX, k.inputTransfer(i, s))
	}
	for _, s := range c.steps {
		if len(s.outs) == 1 && elide[s.outs[0]] || dropped[s.gather] {
			continue
		}
		k.steps = append(k.steps, s)
	}
	return nil
}

// usedNames returns the names that fn's ops read.
func usedNames(fn *mil.Func) map[string]bool {
	used := map[string]bool{}
	for name := range readCounts(fn) {
		used[name] = true
	}
	return used
}

// readCounts returns, per name, the number of operand references to it in fn's ops.
func readCounts(fn *mil.Func) map[string]int {
	reads := make(map[string]int, len(fn.Ops))
	for name, ops := range readers(fn) {
		reads[name] = len(ops)
	}
	return reads
}

// readers returns, per name, the index in fn's ops of the op of each operand reference to it.
func readers(fn *mil.Func) map[string][]int {
	reads := make(map[string][]int, len(fn.Ops))
	for i, op := range fn.Ops {
		if op == nil {
			continue
		}
		for _, a := range op.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref != nil {
					reads[o.Ref.Name] = append(reads[o.Ref.Name], i)
				}
			}
		}
	}
	return reads
}

// constOp defines the tensor of a const op; string and other non-tensor constants are left to the ops
// that read them as arguments.
func (c *compiler) constOp(op *mil.Op) error {
	a := op.Attr("val")
	if a == nil || a.Value == nil {
		return opErr(op, "const has no val")
	}
	if len(op.Results) != 1 || op.Results[0] == nil {
		return opErr(op, "const needs one result")
	}
	v := a.Value
	if (v.Type.Kind != mil.TensorKind && v.Type.Kind != mil.ScalarKind) || v.Type.DType == mil.String {
		return nil
	}
	if t, ok := c.given.constant(op.Results[0].Name); ok {
		c.env[t.name], c.constT[t.name] = t, t
		return nil
	}
	t, err := constTensorIn(op.Results[0].Name, v, c.w, c.newFloats)
	if err != nil {
		return opErr(op, "%v", err)
	}
	c.env[t.name], c.constT[t.name] = t, t
	return nil
}
