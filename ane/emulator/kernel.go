package emulator

import (
	"context"
	"fmt"
	"github.com/anestar/anestar/internal/memlimit"
	"math"
	"slices"
	"sync"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Kernel is a compiled program: the tensors its ops compute and the ops in order, with its own
// surfaces as its first Binding and the further bindings that Bind made.
type Kernel struct {
	Binding             // the kernel's own surfaces; its closed flag is the kernel's
	mu      sync.Mutex  // serialises Eval, Bind and Close of the kernel and all its bindings
	inT     []*tensor   // the input values, read from a binding's inputs at each Eval
	outT    []*tensor   // the output values, written to a binding's outputs after each Eval
	outSegs [][]ioPiece // per output, the buffers its transfer writes (an output concat's parts)
	steps   []step      // the ops, in order
	fp16    bool        // round results to fp16 (FP16)
	check   bool        // report the first result holding inf or NaN
	flops   float64     // floating-point operations per eval
	ar      *arena      // the backend's shared scratch and lock
	owned   [][]float32 // weights and constants, from the recycler, given back at Close
	scratch []*scratch  // the shared buffers it uses
	binds   []*Binding  // the open bindings made by Bind

	// What Bind needs to compile a binding's own plan when this one reads its inputs in place
	// (alias.go).
	inPlace bool               // an input read in place
	fn      *mil.Func          // main
	w       mil.Weights        // its weight files
	opts    Options            // the numerics
	fuse    bool               // op chains fused
	consts  map[string]*tensor // its constants, shared with the bindings' plans
}

var _ ane.Kernel = (*Kernel)(nil)

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
	if fuse {
		fn = canonical(fn)
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	k, err := compilePlan(fn, w, opts, fuse, ar, nil)
	ar.rec.compiled()
	if err != nil {
		return nil, err
	}
	k.fn, k.w, k.opts, k.fuse = fn, w, opts, fuse
	return k, nil
}

// compilePlan compiles fn's plan, on the surfaces g gives (new ones when g is nil). On failure what
// it took goes back, except g's surfaces and constants.
func compilePlan(fn *mil.Func, w mil.Weights, opts Options, fuse bool, ar *arena, g *given) (*Kernel, error) {
	c := &compiler{fn: fn, consts: fn.Consts(), w: w, opts: opts, env: map[string]*tensor{}, concatParts: map[*tensor][]*tensor{},
		noFuse: !fuse, ar: ar, rec: ar.rec, fill: map[*scratch]int{}, given: g, constT: map[string]*tensor{}}
	c.plan = newPlanner(fn, c.newScratch, ar.rec.spoil)
	k, err := c.kernel()
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

// kernel compiles c.fn.
func (c *compiler) kernel() (*Kernel, error) {
	fn := c.fn
	k := &Kernel{fp16: c.opts.Numerics == FP16, check: c.opts.CheckNumerics, ar: c.ar}
	k.Binding.k = k
	for _, in := range fn.Inputs {
		if in == nil {
			return nil, fmt.Errorf("main: nil input")
		}
		s, err := c.surface(len(k.ins), true, in.Name, in.Type)
		if err != nil {
			return nil, fmt.Errorf("%s: input %s: %w", in.Pos, in.Name, err)
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
	fused, skip := c.findFusions()
	used := usedNames(fn)
	outputs := map[string]bool{}
	for _, ref := range fn.Outputs {
		outputs[ref.Name] = true
	}
	casts, castDone := outputCasts(fn, outputs, used), map[int]bool{}
	for i, op := range fn.Ops {
		if op == nil || skip[i] {
			continue
		}
		c.plan.release(i)
		if op.Kind == "const" {
			if err := c.constOp(op); err != nil {
				return nil, err
			}
			continue
		}
		if t, ok := c.outputConcat(op, outputs, used); ok {
			c.env[t.name] = t
			continue
		}
		if j, ok := casts[i]; ok && fused[i] == nil && fused[j] == nil && !skip[j] {
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
		if f := fused[i]; f != nil {
			build, ok = func(c *compiler, _ *mil.Op) (step, error) { return f.build(c) }, true
		}
		if !ok {
			return nil, unsupported(op)
		}
		s, err := build(c, op)
		if err != nil {
			return nil, err
		}
		s.op = op
		c.add(s)
		k.flops += s.flops
	}
	elide := map[*tensor]bool{} // output concats written from their parts
	for _, ref := range fn.Outputs {
		t, ok := c.env[ref.Name]
		if !ok {
			return nil, fmt.Errorf("%s: output %q is not defined", ref.Pos, ref.Name)
		}
		typ := mil.Tensor(t.dtype, t.shape...)
		s, err := c.surface(len(k.outs), false, ref.Name, typ)
		if err != nil {
			return nil, fmt.Errorf("%s: output %s: %w", ref.Pos, ref.Name, err)
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
	for i, s := range k.ins {
		if c.aliased[i] {
			k.inX = append(k.inX, newTransfer(s, nil, true)) // the memory's lock alone: the plan reads it in place
			continue
		}
		k.inX = append(k.inX, newInputTransfer(s, k.inT[i]))
	}
	for _, s := range c.steps {
		if len(s.outs) == 1 && elide[s.outs[0]] {
			continue
		}
		k.steps = append(k.steps, s)
	}
	if !c.noFuse && !c.opts.CheckNumerics { // checks name the op whose result went wrong: one op per step
		k.steps = chainSteps(k.steps)
	}
	k.mems, k.owned, k.scratch, k.consts = c.mems, c.owned, c.scratch, c.constT
	return k, nil
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
	reads := map[string]int{}
	for name, ops := range readers(fn) {
		reads[name] = len(ops)
	}
	return reads
}

// readers returns, per name, the index in fn's ops of the op of each operand reference to it.
func readers(fn *mil.Func) map[string][]int {
	reads := map[string][]int{}
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

// FLOPs is the number of floating-point operations one Eval does (multiply-adds count two).
func (k *Kernel) FLOPs() float64 { return k.flops }

// run runs the steps once, on the values the caller has read into k.inT; n is the binding's eval count,
// for messages. The caller holds k.mu and k.ar.mu.
func (k *Kernel) run(ctx context.Context, n int) error {
	for i := range k.steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("emulator: eval %d: %w", n, err)
		}
		s := &k.steps[i]
		if s.run != nil {
			if err := s.run(); err != nil {
				return fmt.Errorf("emulator: eval %d: %w", n, opErr(s.op, "%w", err))
			}
		}
		if k.fp16 {
			for _, r := range s.round {
				parallel(r.n, roundGrain, r.fn)
			}
		}
		if k.check {
			if err := k.checkStep(s, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStep reports the first result of s that holds inf or NaN.
func (k *Kernel) checkStep(s *step, n int) error {
	for _, t := range s.outs {
		for i, v := range t.data {
			if f := float64(v); math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("emulator: %w", &ane.NumericsError{Eval: n, Line: s.op.Pos.Line, Kind: s.op.Kind,
					Op: s.result, Result: t.name, Value: v, Index: i, Shape: slices.Clone(t.shape)})
			}
		}
	}
	return nil
}

// Close releases the kernel, its surfaces and every binding Bind made: later Evals, and accesses to
// their surfaces, fail with an error wrapping (or, from surface methods, naming) ane.ErrClosed. Its
// weight buffers and surface memory go to the backend's recycler for the next compiles (recycle.go),
// and its share of the shared scratch ends (scratch.go). Closing twice is harmless.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.ar.mu.Lock()
	defer k.ar.mu.Unlock()
	bytes := k.Binding.release()
	for _, b := range k.binds {
		bytes = append(bytes, b.release()...)
	}
	k.binds = nil
	k.ar.rec.give(k.owned, bytes)
	k.ar.release(k.scratch)
	k.steps, k.inT, k.outT, k.outSegs, k.owned, k.scratch = nil, nil, nil, nil, nil, nil
	return nil
}

// checkMemory refuses a program whose buffers cannot be allocated, before any is: the emulator holds
// every value as float32, so it needs at most 4 bytes per element of every input and op result (the
// planner reuses buffers, so usually less).
func checkMemory(fn *mil.Func) error {
	var elems uint64
	var big *mil.Var
	add := func(v *mil.Var) {
		if v == nil {
			return
		}
		n := uint64(max(v.Type.NumElements(), 0))
		elems += n
		if big == nil || n > uint64(max(big.Type.NumElements(), 0)) {
			big = v
		}
	}
	for _, in := range fn.Inputs {
		add(in)
	}
	for _, op := range fn.Ops {
		if op == nil {
			continue
		}
		for _, r := range op.Results {
			add(r)
		}
	}
	if big == nil {
		return nil
	}
	what := fmt.Sprintf("compiling %q (its largest value %s is %s)", fn.Name, big.Name, big.Type)
	return memlimit.Check(4*elems, what)
}
