package mil

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Reverse-mode differentiation of a program (Grad). The backward program is built with a Builder, so
// every op it adds is checked as it is added; forward values it needs are replayed from the forward
// program under their own names when they were not saved, and only when a rule asks for them, so the
// backward holds no op whose result goes unused.

// GradSpec says what Grad differentiates.
type GradSpec struct {
	Wrt        []string // inputs of main to differentiate with respect to; the backward outputs d_NAME of each, in order
	Save       []string // vars the forward outputs so that the backward takes them instead of recomputing them
	Cotangents []string // outputs of main that get a cotangent input d_NAME; nil means every output
	Vars       []string // vars of main (op results) whose cotangents the backward outputs too, as d_NAME after the wrt ones
}

// Gradient is a forward program and the backward program Grad derived from it.
type Gradient struct {
	Forward         *Program // the program with the saved vars added as outputs (the program itself when none are)
	ForwardWeights  Weights
	Backward        *Program // inputs: main's inputs, the saved vars, d_O per cotangent; outputs: d_W per wrt name
	BackwardWeights Weights
}

// Grad derives the backward program of p (whose weight files are w) under spec. Errors are *Error
// values naming the op (by result name) or the name at fault.
func Grad(p *Program, w Weights, spec GradSpec) (*Gradient, error) {
	main := p.Main()
	if main == nil {
		return nil, &Error{Msg: "mil.grad: the program has no main function"}
	}
	if err := Check(p); err != nil {
		return nil, err
	}
	g := &grader{
		src: main, w: w, consts: main.Consts(),
		def: map[string]*Op{}, types: map[string]Type{}, names: map[string]bool{},
		have: map[string]*Var{}, adj: map[string][]*Var{}, active: map[string]bool{}, pieces: map[string][]piece{}, views: map[string]string{},
		b: NewBuilder(), copied: map[string]bool{},
	}
	for _, in := range main.Inputs {
		g.types[in.Name], g.names[in.Name] = in.Type, true
	}
	for _, op := range main.Ops {
		for _, r := range op.Results {
			g.def[r.Name], g.types[r.Name], g.names[r.Name] = op, r.Type, true
		}
	}
	fwd, err := g.forward(p, spec.Save)
	if err != nil {
		return nil, err
	}
	for _, sv := range spec.Save { // a saved chain of reshapes: each var is the next reshaped back
		for cur := sv; g.def[cur] != nil && g.def[cur].Kind == "reshape"; {
			x := argName(g.def[cur], "x")
			if x == "" || slices.Contains(spec.Save, x) || g.def[x] == nil || g.views[x] != "" {
				break
			}
			g.views[x] = cur // e.g. softmax probabilities saved flattened to travel as rows
			cur = x
		}
	}
	if err := g.backward(spec); err != nil {
		return nil, err
	}
	bp, bw, err := g.b.Build()
	if err != nil {
		return nil, fmt.Errorf("mil.grad: the backward program does not check (a rule's fault): %w", err)
	}
	for from, to := range g.renames {
		renameVar(bp.Main(), from, to)
	}
	if err := Check(bp); err != nil {
		return nil, fmt.Errorf("mil.grad: the backward program does not check after naming its outputs: %w", err)
	}
	return &Gradient{Forward: fwd, ForwardWeights: w, Backward: bp, BackwardWeights: bw}, nil
}

// grader holds the state of one Grad.
type grader struct {
	src     *Func
	w       Weights
	consts  Consts
	def     map[string]*Op     // forward var -> the op defining it (inputs have none)
	types   map[string]Type    // forward var -> its type
	names   map[string]bool    // every forward name, which generated names avoid
	b       *Builder           // the backward
	have    map[string]*Var    // forward var -> its value in the backward (input, saved or replayed)
	adj     map[string][]*Var  // forward var -> the contributions to its cotangent
	active  map[string]bool    // forward vars that depend on a wrt input
	pieces  map[string][]piece // forward var -> cotangents of slices of it along one axis, not yet padded
	views   map[string]string  // forward var -> the reshape of it toward a saved var (a chain of reshapes): the var is that reshaped back
	copied  map[string]bool    // weight files copied into the backward
	n       int                // counter for generated names
	renames map[string]string
}

// forward returns p with the saved vars added as outputs (p itself when there are none).
func (g *grader) forward(p *Program, save []string) (*Program, error) {
	outs := map[string]bool{}
	for _, o := range g.src.Outputs {
		outs[o.Name] = true
	}
	var extra []Ref
	seen := map[string]bool{}
	for _, s := range save {
		switch op := g.def[s]; {
		case seen[s]:
			return nil, &Error{Msg: fmt.Sprintf("mil.grad: save names %q twice", s)}
		case !g.names[s]:
			return nil, &Error{Msg: fmt.Sprintf("mil.grad: save names %q, which is not a var of the program", s)}
		case op == nil:
			return nil, &Error{Msg: fmt.Sprintf("mil.grad: save names %q, an input: the backward takes every input already; leave it out of save", s)}
		case op.Kind == "const":
			return nil, &Error{Op: s, Kind: "const", Msg: "mil.grad: save names a const: the backward has it already; leave it out of save"}
		}
		seen[s] = true
		if !outs[s] {
			extra = append(extra, Ref{Name: s})
			outs[s] = true
		}
	}
	if len(save) == 0 {
		return p, nil
	}
	fn := *g.src
	fn.Ops = slices.Clone(g.src.Ops)
	fn.Outputs = append(slices.Clone(g.src.Outputs), extra...)
	q := *p
	q.Funcs = slices.Clone(p.Funcs)
	for i, f := range q.Funcs {
		if f == g.src {
			q.Funcs[i] = &fn
		}
	}
	return &q, nil
}

// backward builds the backward program: its inputs, the cotangents of every active var in reverse op
// order, and the outputs d_W.
func (g *grader) backward(spec GradSpec) error {
	inputs := map[string]*Var{}
	for _, in := range g.src.Inputs {
		inputs[in.Name] = in
	}
	if len(spec.Wrt) == 0 {
		return &Error{Msg: "mil.grad: wrt is empty: name the inputs to differentiate with respect to"}
	}
	for i, x := range spec.Wrt {
		if inputs[x] == nil {
			return &Error{Msg: fmt.Sprintf("mil.grad: wrt names %q, which is not an input of the program (its inputs: %s)", x, strings.Join(names(g.src.Inputs), ", "))}
		}
		if slices.Contains(spec.Wrt[:i], x) {
			return &Error{Msg: fmt.Sprintf("mil.grad: wrt names %q twice", x)}
		}
		g.active[x] = true
	}
	for i, v := range spec.Vars {
		op := g.def[v]
		switch {
		case op == nil || op.Kind == "const":
			return &Error{Msg: fmt.Sprintf("mil.grad: vars names %q, which is not an op result of the program (inputs go in wrt)", v)}
		case slices.Contains(spec.Vars[:i], v) || slices.Contains(spec.Wrt, v):
			return &Error{Msg: fmt.Sprintf("mil.grad: %q is asked for twice", v)}
		}
	}
	for _, op := range g.src.Ops {
		if op.Kind == "const" {
			continue
		}
		if g.opActive(op) {
			for _, r := range op.Results {
				g.active[r.Name] = true
			}
		}
	}
	reserved := func(n string) error {
		if g.names[n] {
			return &Error{Msg: fmt.Sprintf("mil.grad: the name %s that the backward needs is taken by a var of the program; rename that var", n)}
		}
		return nil
	}
	// Inputs: the program's, the saved vars, the cotangents.
	for _, in := range g.src.Inputs {
		g.have[in.Name] = g.b.Input(in.Name, in.Type)
	}
	for _, s := range spec.Save {
		g.have[s] = g.b.Input(s, g.types[s])
	}
	outs := map[string]bool{}
	for _, o := range g.src.Outputs {
		outs[o.Name] = true
	}
	cot := spec.Cotangents
	if cot == nil {
		for _, o := range g.src.Outputs {
			if !slices.Contains(cot, o.Name) {
				cot = append(cot, o.Name)
			}
		}
	}
	for i, o := range cot {
		if !outs[o] {
			return &Error{Msg: fmt.Sprintf("mil.grad: cotangents names %q, which is not an output of the program", o)}
		}
		if slices.Contains(cot[:i], o) {
			return &Error{Msg: fmt.Sprintf("mil.grad: cotangents names %q twice", o)}
		}
		if err := reserved("d_" + o); err != nil {
			return err
		}
		d := g.b.Input("d_"+o, g.types[o])
		if d == nil {
			return g.b.Err()
		}
		if g.active[o] {
			g.adj[o] = append(g.adj[o], d)
		}
	}
	if err := g.b.Err(); err != nil {
		return err
	}
	// Cotangents, last op first.
	for i := len(g.src.Ops) - 1; i >= 0; i-- {
		op := g.src.Ops[i]
		if op.Kind == "const" {
			continue
		}
		var pending bool
		for _, r := range op.Results {
			pending = pending || g.hasCot(r.Name)
		}
		if !pending {
			continue
		}
		rule := gradRules[op.Kind]
		if rule == nil || len(op.Results) != 1 {
			return &Error{Op: op.Results[0].Name, Kind: op.Kind, Msg: fmt.Sprintf("mil.grad: no gradient rule for %s (rules: %s)", op.Kind, strings.Join(GradOps(), ", "))}
		}
		r := op.Results[0]
		ct, err := g.sum(r.Name)
		if err != nil {
			return err
		}
		if err := rule(g, op, ct); err != nil {
			return g.opErr(op, err)
		}
	}
	// Outputs d_W, named after the inputs, then d_V of the vars asked for.
	g.renames = map[string]string{}
	used := map[string]bool{}
	var res []*Var
	for _, x := range append(slices.Clone(spec.Wrt), spec.Vars...) {
		name := "d_" + x
		if err := reserved(name); err != nil {
			return err
		}
		if !g.hasCot(x) {
			what := "wrt"
			if !slices.Contains(spec.Wrt, x) {
				what = "vars"
			}
			return &Error{Msg: fmt.Sprintf("mil.grad: %s does not reach any output given a cotangent, or depends on no wrt input, so %s would be zero: leave %s out of %s", x, name, x, what)}
		}
		v, err := g.sum(x)
		if err == nil {
			v, err = g.full(v, g.types[x].Shape)
		}
		if err != nil {
			return err
		}
		if g.generated(v) && !used[v.Name] {
			g.renames[v.Name] = name
		} else { // an input, a replayed value or another output: a copy of its own
			v = g.b.Reshape(name, v, g.types[x].Shape)
		}
		used[v.Name] = true
		res = append(res, v)
	}
	g.b.Output(res...)
	return g.b.Err()
}

// opActive reports whether any operand of op is active.
func (g *grader) opActive(op *Op) bool {
	for _, a := range op.Args {
		for _, o := range a.Operands {
			if o.Ref != nil && g.active[o.Ref.Name] {
				return true
			}
		}
	}
	return false
}

// opErr puts op's name and kind on err unless it has them.
func (g *grader) opErr(op *Op, err error) error {
	if e, ok := err.(*Error); ok && e.Op != "" {
		return err
	}
	return &Error{Op: op.Results[0].Name, Kind: op.Kind, Msg: "mil.grad: " + err.Error()}
}

// generated reports whether v was made by a gradient rule (not an input or a replayed forward value).
func (g *grader) generated(v *Var) bool { return !g.names[v.Name] && !strings.HasPrefix(v.Name, "d_") }

// fresh returns a new name that no forward var has and the backward has not used.
func (g *grader) fresh(what string) string {
	for {
		g.n++
		n := "g" + strconv.Itoa(g.n) + "_" + what
		if !g.names[n] && !g.b.defined(n) {
			return n
		}
	}
}

// val returns forward var name in the backward: an input, a saved var, or the value replayed (with the
// values it needs) from the forward program.
func (g *grader) val(name string) (*Var, error) {
	if v := g.have[name]; v != nil {
		return v, nil
	}
	op := g.def[name]
	if op == nil {
		return nil, &Error{Msg: fmt.Sprintf("mil.grad: %q is not a var of the program", name)}
	}
	if sv := g.views[name]; sv != "" {
		src, err := g.val(sv) // the saved var, or the next var of its chain of reshapes
		if err != nil {
			return nil, err
		}
		shape, err := g.b.addConst(g.fresh("shape"), IntsValue(g.types[name].Shape...))
		if err != nil {
			return nil, err
		}
		rs, err := g.b.Op("reshape", name, Args{"x": src, "shape": shape})
		if err != nil {
			return nil, err
		}
		g.have[name] = rs[0]
		return rs[0], nil
	}
	if op.Kind == "const" {
		val := op.Attr("val").Value
		if val.Blob != nil && !g.copied[val.Blob.Path] {
			file, ok := g.w[val.Blob.Path]
			if !ok {
				return nil, &Error{Op: name, Kind: "const", Msg: fmt.Sprintf("mil.grad: weight file %s is missing", val.Blob.Path)}
			}
			if err := g.b.addFile(val.Blob.Path, file); err != nil {
				return nil, err
			}
			g.copied[val.Blob.Path] = true
		}
		c, err := constOp(name, val)
		if err != nil {
			return nil, err
		}
		g.b.commitConst(c)
		g.have[name] = c.Results[0]
		return c.Results[0], nil
	}
	args := Args{}
	for _, a := range op.Args {
		var vs []*Var
		for _, o := range a.Operands {
			if o.Lit != nil {
				c, err := g.b.addConst(g.fresh(a.Name), o.Lit)
				if err != nil {
					return nil, err
				}
				vs = append(vs, c)
				continue
			}
			v, err := g.val(o.Ref.Name)
			if err != nil {
				return nil, err
			}
			vs = append(vs, v)
		}
		if a.Tuple {
			args[a.Name] = vs
		} else if len(vs) == 1 {
			args[a.Name] = vs[0]
		}
	}
	opName := op.Results[0].Name
	if a := op.Attr("name"); a != nil && len(op.Results) > 1 {
		opName, _ = a.Value.Str()
	}
	rs, err := g.b.Op(op.Kind, opName, args)
	if err != nil {
		return nil, err
	}
	for i, r := range rs {
		if r.Name != op.Results[i].Name {
			return nil, &Error{Op: op.Results[i].Name, Kind: op.Kind, Msg: fmt.Sprintf("mil.grad: cannot recompute this result under its name (it would be %s); save it", r.Name)}
		}
		g.have[r.Name] = r
	}
	return g.have[name], nil
}

// arg returns the backward value of op's single-operand argument name, and its forward name ("" for
// a literal).
func (g *grader) arg(op *Op, name string) (*Var, string, error) {
	a := op.Arg(name)
	if a == nil || len(a.Operands) != 1 {
		return nil, "", fmt.Errorf("argument %s is missing", name)
	}
	o := a.Operands[0]
	if o.Lit != nil {
		v, err := g.b.addConst(g.fresh(name), o.Lit)
		return v, "", err
	}
	v, err := g.val(o.Ref.Name)
	return v, o.Ref.Name, err
}

// argName is the forward name of op's single-operand argument, or "".
func argName(op *Op, name string) string {
	a := op.Arg(name)
	if a == nil || len(a.Operands) != 1 || a.Operands[0].Ref == nil {
		return ""
	}
	return a.Operands[0].Ref.Name
}

// contribute adds v to the cotangent of forward var name, when name is active.
func (g *grader) contribute(name string, v *Var) {
	if name != "" && g.active[name] && v != nil {
		g.adj[name] = append(g.adj[name], v)
	}
}

// piece is the cotangent of a slice of a var that cuts one axis: v covers [start, start + v's extent).
type piece struct {
	v     *Var
	axis  int
	start int
}

// hasCot reports whether forward var name has a cotangent.
func (g *grader) hasCot(name string) bool { return len(g.adj[name]) > 0 || len(g.pieces[name]) > 0 }

// joinPieces turns the slice cotangents of name into contributions: one concat when they are its only
// ones and cut one axis without overlap (the q, k, v rows of one product), zeros filling any gap; else
// each padded with zeros to name's shape.
func (g *grader) joinPieces(name string) error {
	ps := g.pieces[name]
	delete(g.pieces, name)
	if len(ps) == 0 {
		return nil
	}
	shape := g.types[name].Shape
	slices.SortStableFunc(ps, func(a, b piece) int { return a.start - b.start })
	tiles := len(g.adj[name]) == 0
	for i, p := range ps {
		tiles = tiles && p.axis == ps[0].axis && (i == 0 || p.start >= ps[i-1].start+ps[i-1].v.Type.Shape[p.axis])
	}
	if !tiles {
		for _, p := range ps {
			v, err := g.pad(p.v, p.axis, p.start, shape[p.axis])
			if err != nil {
				return err
			}
			g.adj[name] = append(g.adj[name], v)
		}
		return nil
	}
	axis := ps[0].axis
	var vals []*Var
	at := 0
	gap := func(n int) error {
		if n == 0 {
			return nil
		}
		zs := slices.Clone(ps[0].v.Type.Shape)
		zs[axis] = n
		z, err := g.tensorConst("zeros", ps[0].v.Type.DType, zs, 0)
		vals = append(vals, z)
		return err
	}
	for _, p := range ps {
		if err := gap(p.start - at); err != nil {
			return err
		}
		vals = append(vals, p.v)
		at = p.start + p.v.Type.Shape[axis]
	}
	if err := gap(shape[axis] - at); err != nil {
		return err
	}
	if len(vals) == 1 {
		g.adj[name] = []*Var{vals[0]}
		return nil
	}
	v, err := g.op("concat", "d_"+name, Args{"values": vals, "axis": axis, "interleave": false})
	g.adj[name] = []*Var{v}
	return err
}

// pad returns v, the cotangent of [start, start + v's extent) along axis of a dim of n, padded with
// zeros to n.
func (g *grader) pad(v *Var, axis, start, n int) (*Var, error) {
	vals := []*Var{}
	for _, k := range []int{start, -1, n - start - v.Type.Shape[axis]} {
		switch {
		case k == -1:
			vals = append(vals, v)
		case k > 0:
			zs := slices.Clone(v.Type.Shape)
			zs[axis] = k
			z, err := g.tensorConst("zeros", v.Type.DType, zs, 0)
			if err != nil {
				return nil, err
			}
			vals = append(vals, z)
		}
	}
	if len(vals) == 1 {
		return v, nil
	}
	return g.op("concat", "dslice", Args{"values": vals, "axis": axis, "interleave": false})
}

// sum returns the cotangent of forward var name: its contributions added up.
func (g *grader) sum(name string) (*Var, error) {
	if err := g.joinPieces(name); err != nil {
		return nil, err
	}
	cs := g.adj[name]
	if len(cs) == 0 {
		return nil, fmt.Errorf("no cotangent for %s", name)
	}
	v := cs[0]
	for _, c := range cs[1:] {
		var err error
		if v, err = g.op("add", "d_"+name, Args{"x": v, "y": c}); err != nil {
			return nil, err
		}
	}
	g.adj[name] = []*Var{v}
	return v, nil
}

// op adds an op under a fresh name; arguments other than vars become consts of fresh names (float
// scalars of the dtype of the op's first float var).
func (g *grader) op(kind, what string, args Args) (*Var, error) {
	dt := FP32
	for _, k := range []string{"x", "y", "values"} {
		if v, ok := args[k].(*Var); ok && v.Type.DType.IsFloat() {
			dt = v.Type.DType
			break
		}
	}
	for k, a := range args {
		switch a.(type) {
		case *Var, []*Var, nil:
			continue
		}
		lit, err := literal(a, dt)
		if err != nil {
			return nil, err
		}
		c, err := g.b.addConst(g.fresh(what+"_"+k), lit)
		if err != nil {
			return nil, err
		}
		args[k] = c
	}
	rs, err := g.b.Op(kind, g.fresh(what), args)
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// tensorConst adds a const of dtype dt and the given shape, every element v: inline when small, else
// in a weight file of its own.
func (g *grader) tensorConst(what string, dt DType, shape []int, v float64) (*Var, error) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	name := g.fresh(what)
	if n <= 64 {
		nums := make([]float64, n)
		for i := range nums {
			nums[i] = v
		}
		return g.b.addConst(name, TensorValue(dt, shape, nums))
	}
	var c *Var
	if v == 0 {
		c = g.b.WeightZeros(name, dt, shape, n)
	} else {
		data := make([]float32, n)
		for i := range data {
			data[i] = float32(v)
		}
		c = g.b.Weight(name, dt, shape, data)
	}
	if c == nil {
		err := g.b.err
		g.b.err = nil
		return nil, err
	}
	return c, nil
}

// full broadcasts cotangent v (whose shape broadcasts to shape) to shape.
func (g *grader) full(v *Var, shape []int) (*Var, error) {
	vs := v.Type.Shape
	if slices.Equal(vs, shape) {
		return v, nil
	}
	if len(vs) > len(shape) {
		return nil, fmt.Errorf("cotangent %s does not broadcast to %v", v.Type, shape)
	}
	if len(vs) < len(shape) {
		padded := append(slices.Repeat([]int{1}, len(shape)-len(vs)), vs...)
		var err error
		if v, err = g.op("reshape", "bc", Args{"x": v, "shape": padded}); err != nil {
			return nil, err
		}
		vs = padded
	}
	ones := make([]int, len(shape))
	for i := range shape {
		switch {
		case vs[i] == shape[i]:
			ones[i] = 1
		case vs[i] == 1:
			ones[i] = shape[i]
		default:
			return nil, fmt.Errorf("cotangent %s does not broadcast to %v", v.Type, shape)
		}
	}
	one, err := g.tensorConst("ones", v.Type.DType, ones, 1)
	if err != nil {
		return nil, err
	}
	return g.op("mul", "bc", Args{"x": v, "y": one})
}

// unbroadcast reduces cotangent v of a binary op's result to the shape of an operand that was broadcast
// to it; dims the cotangent itself still broadcasts along are filled first.
func (g *grader) unbroadcast(v *Var, shape []int) (*Var, error) {
	vs := v.Type.Shape
	if slices.Equal(vs, shape) {
		return v, nil
	}
	rank := max(len(vs), len(shape))
	pad := func(s []int) []int { return append(slices.Repeat([]int{1}, rank-len(s)), s...) }
	pv, ps := pad(vs), pad(shape)
	var fill, axes []int
	for i := range rank {
		switch {
		case pv[i] == 1 && ps[i] > 1:
			fill = append(fill, i)
		case pv[i] > 1 && ps[i] == 1:
			axes = append(axes, i)
		}
	}
	var err error
	if len(pv) != len(vs) {
		if v, err = g.op("reshape", "ub", Args{"x": v, "shape": pv}); err != nil {
			return nil, err
		}
	}
	if len(fill) > 0 {
		target := slices.Clone(pv)
		for _, i := range fill {
			target[i] = ps[i]
		}
		if v, err = g.full(v, target); err != nil {
			return nil, err
		}
	}
	if len(axes) > 0 {
		if v, err = g.op("reduce_sum", "ub", Args{"x": v, "axes": axes, "keep_dims": true}); err != nil {
			return nil, err
		}
	}
	if !slices.Equal(v.Type.Shape, shape) {
		if len(shape) == 0 {
			return g.op("reduce_sum", "ub", Args{"x": v, "keep_dims": false})
		}
		return g.op("reshape", "ub", Args{"x": v, "shape": shape})
	}
	return v, nil
}

// addFile adds an existing weight file, which weights the program copies refer to.
func (b *Builder) addFile(path string, file []byte) error {
	if _, ok := b.files[path]; ok {
		return fmt.Errorf("weight file %s is added twice", path)
	}
	n, err := BlobFileCount(file)
	if err != nil {
		return fmt.Errorf("weight file %s: %w", path, err)
	}
	b.files[path] = &BlobWriter{buf: file, count: uint32(n), shared: true}
	return nil
}

// renameVar renames var from to to in f: its definition, the op's name and every use.
func renameVar(f *Func, from, to string) {
	for _, op := range f.Ops {
		for _, r := range op.Results {
			if r.Name == from {
				r.Name = to
				if a := op.Attr("name"); a != nil {
					a.Value = StringValue(to)
				}
			}
		}
		for _, a := range op.Args {
			for _, o := range a.Operands {
				if o.Ref != nil && o.Ref.Name == from {
					o.Ref.Name = to
				}
			}
		}
	}
	for i := range f.Outputs {
		if f.Outputs[i].Name == from {
			f.Outputs[i].Name = to
		}
	}
}

func names(vs []*Var) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name
	}
	return out
}
