package emulator

import (
	"fmt"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// step is one op of a compiled program.
type step struct {
	op     *mil.Op      // the source op, for error messages
	outs   []*tensor    // its results
	run    func() error // computes outs from their inputs; nil when the results alias an input
	exact  bool         // results are copies of input values and need no rounding
	fused  bool         // run rounds its results to fp16 itself (where they need it), piece by piece
	round  []rounder    // the fp16 rounding passes run after run (FP16 mode)
	flops  float64      // floating-point operations per eval, for reports
	result string       // first result name
	pw     *piecewise   // an elementwise step's work over any range of its result (chain.go); nil for others
	chain  int          // the ops of a chain step (chain.go); 0 for others
	gather *gather      // the copy a slice or transpose step makes (viewStep); nil for others
}

// rounder rounds one result buffer to fp16, in parallel pieces.
type rounder struct {
	n  int              // elements
	fn func(lo, hi int) // rounds [lo, hi)
}

// compiler turns a checked MIL function into steps. Its fields are grouped by the pass that owns
// them (passes.go): what is compiled, the rewrite passes' nodes, the build pass's values and steps,
// the buffers, and the surfaces.
type compiler struct {
	source           // what is compiled: read by every pass
	rw     *rewriter // the nodes the rewrite passes made of the ops, which the build pass compiles
	build            // the build pass's values and steps
	memory           // where the buffers come from
	ports            // the kernel's surfaces
}

// source is what a compile compiles, which every pass reads and none changes.
type source struct {
	fn     *mil.Func   // main
	consts mil.Consts  // main's const values by name, read once
	w      mil.Weights // weight files
	opts   Options     // numerics
	noFuse bool        // compile every op on its own, every input copied (tests compare against this)
}

// build is the state of the build pass, which compiles the nodes into steps (passes.go).
type build struct {
	env    map[string]*tensor // every value defined so far
	steps  []step             // in program order
	inputs map[*tensor]bool   // the function's inputs, filled from their surfaces at each Eval
	constT map[string]*tensor // the constants decoded (or given), by name
	// concatParts maps the result of a concat that lays its values end to end (one block each) to
	// those values, so that an output concat can be written to its surface from the parts.
	concatParts map[*tensor][]*tensor
	inViews     map[*tensor][]inView // per function input, the slices that read it (input_views.go)
}

// memory is where the build pass's buffers come from: planned results (plan.go), the backend's shared
// scratch (scratch.go) and the recycler's weights (recycle.go).
type memory struct {
	plan    *planner         // the buffers of op results, over the liveness pass's last uses
	ar      *arena           // the backend's shared scratch
	rec     *recycler        // where weights and surface memory come from
	owned   [][]float32      // the buffers taken from rec, given back when the kernel closes
	fill    map[*scratch]int // per shared buffer the kernel uses, the elements it has carved
	scratch []*scratch       // the same, in order
}

// ports is the kernel's surfaces and how its inputs are read (alias.go).
type ports struct {
	given   *given            // the surfaces to compile for, and what to place in them (nil: new ones)
	mems    []*ane.HeapMemory // the memory of the kernel's surfaces
	aliased map[int]bool      // the inputs read in place, by index
}

// opErr returns an error that names op's MIL position, kind and first result, then format (which may
// wrap an error with %w).
func opErr(op *mil.Op, format string, args ...any) error {
	name := ""
	if len(op.Results) > 0 && op.Results[0] != nil {
		name = op.Results[0].Name
	}
	return fmt.Errorf("%s: %s %q: "+format, append([]any{op.Pos, op.Kind, name}, args...)...)
}

// unsupported is the error of an op the emulator has no implementation of; it wraps
// ane.ErrUnsupportedOp.
func unsupported(op *mil.Op) error {
	name := ""
	if len(op.Results) > 0 && op.Results[0] != nil {
		name = op.Results[0].Name
	}
	return fmt.Errorf("%s: %s %q: the emulator has no implementation of %s: %w", op.Pos, op.Kind, name, op.Kind, ane.ErrUnsupportedOp)
}

// operand returns the tensor an operand names, making a constant tensor for a literal.
func (c *compiler) operand(op *mil.Op, arg string, o mil.Operand) (*tensor, error) {
	switch {
	case o.Ref != nil:
		t, ok := c.env[o.Ref.Name]
		if !ok {
			return nil, opErr(op, "argument %s: %q is not defined (or is not a tensor)", arg, o.Ref.Name)
		}
		return t, nil
	case o.Lit != nil:
		return constTensor(arg, o.Lit, c.w)
	}
	return nil, opErr(op, "argument %s is empty", arg)
}

// tensorArg returns op's required single-tensor argument name.
func (c *compiler) tensorArg(op *mil.Op, name string) (*tensor, error) {
	a := op.Arg(name)
	if a == nil {
		return nil, opErr(op, "missing argument %s", name)
	}
	if a.Tuple || len(a.Operands) != 1 {
		return nil, opErr(op, "argument %s: want one value, got %d", name, len(a.Operands))
	}
	return c.operand(op, name, a.Operands[0])
}

// optTensorArg is tensorArg for an argument that may be absent (nil, nil).
func (c *compiler) optTensorArg(op *mil.Op, name string) (*tensor, error) {
	if op.Arg(name) == nil {
		return nil, nil
	}
	return c.tensorArg(op, name)
}

// tupleArg returns the tensors of a tuple argument such as concat's values.
func (c *compiler) tupleArg(op *mil.Op, name string) ([]*tensor, error) {
	a := op.Arg(name)
	if a == nil {
		return nil, opErr(op, "missing argument %s", name)
	}
	ts := make([]*tensor, len(a.Operands))
	for i, o := range a.Operands {
		t, err := c.operand(op, name, o)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// constArg returns the compile-time value of op's argument name, or nil when it is absent.
func (src *source) constArg(op *mil.Op, name string) (*mil.Value, error) {
	a := op.Arg(name)
	if a == nil {
		return nil, nil
	}
	v := src.consts.ArgValue(op, name)
	if v == nil {
		return nil, opErr(op, "argument %s must be a constant", name)
	}
	return v, nil
}

// intsArg returns a constant integer (list) argument; ok is false when it is absent.
func (src *source) intsArg(op *mil.Op, name string) (v []int, ok bool, err error) {
	val, err := src.constArg(op, name)
	if val == nil || err != nil {
		return nil, false, err
	}
	v, err = val.Ints()
	if err != nil {
		return nil, false, opErr(op, "argument %s: %v", name, err)
	}
	return v, true, nil
}

// intArg returns a constant scalar integer argument, or def when it is absent.
func (src *source) intArg(op *mil.Op, name string, def int) (int, error) {
	v, ok, err := src.intsArg(op, name)
	if err != nil || !ok {
		return def, err
	}
	if len(v) != 1 {
		return 0, opErr(op, "argument %s: want one integer, got %d", name, len(v))
	}
	return v[0], nil
}

// boolArg returns a constant bool argument, or def when it is absent.
func (src *source) boolArg(op *mil.Op, name string, def bool) (bool, error) {
	val, err := src.constArg(op, name)
	if val == nil || err != nil {
		return def, err
	}
	b, err := val.Bool()
	if err != nil {
		return false, opErr(op, "argument %s: %v", name, err)
	}
	return b, nil
}

// boolsArg returns a constant bool list argument (such as begin_mask), or nil when absent.
func (src *source) boolsArg(op *mil.Op, name string) ([]bool, error) {
	val, err := src.constArg(op, name)
	if val == nil || err != nil {
		return nil, err
	}
	out := make([]bool, len(val.Nums))
	for i, x := range val.Nums {
		out[i] = x != 0
	}
	return out, nil
}

// floatArg returns a constant scalar number argument, or def when it is absent.
func (src *source) floatArg(op *mil.Op, name string, def float64) (float64, error) {
	val, err := src.constArg(op, name)
	if val == nil || err != nil {
		return def, err
	}
	if val.Blob != nil || len(val.Nums) != 1 {
		return 0, opErr(op, "argument %s: want one number", name)
	}
	return val.Nums[0], nil
}

// strArg returns a constant string argument, or def when it is absent.
func (src *source) strArg(op *mil.Op, name, def string) (string, error) {
	val, err := src.constArg(op, name)
	if val == nil || err != nil {
		return def, err
	}
	s, err := val.Str()
	if err != nil {
		return "", opErr(op, "argument %s: %v", name, err)
	}
	return s, nil
}

// constTensor decodes a literal or const value into a tensor; fp16 values are rounded to fp16.
func constTensor(name string, v *mil.Value, w mil.Weights) (*tensor, error) {
	return constTensorIn(name, v, w, nil)
}

// constTensorIn is constTensor with an fp16 weight blob decoded into a buffer from alloc (when not nil).
func constTensorIn(name string, v *mil.Value, w mil.Weights, alloc func(n int) []float32) (*tensor, error) {
	if v.Type.Kind != mil.TensorKind && v.Type.Kind != mil.ScalarKind {
		return nil, fmt.Errorf("%s: value of type %s is not a tensor", v.Pos, v.Type)
	}
	if v.Type.DType == mil.String {
		return nil, fmt.Errorf("%s: string value is not a tensor", v.Pos)
	}
	var data []float32
	var err error
	if v.Blob != nil && isFloat16(v.Type.DType) {
		data, err = decodeF16Blob(v, w, alloc)
	} else {
		data, err = v.Float32s(w)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", v.Pos, err)
	}
	if len(data) != v.Type.NumElements() {
		return nil, fmt.Errorf("%s: %s holds %d values, want %d", v.Pos, v.Type, len(data), v.Type.NumElements())
	}
	if isFloat16(v.Type.DType) && v.Blob == nil {
		roundSlice(data)
	}
	return &tensor{name: name, shape: append([]int{}, v.Type.Shape...), dtype: v.Type.DType, data: data, konst: true}, nil
}

// decodeF16Blob reads an fp16 weight blob with the vectorised bulk conversion into a buffer from alloc
// (a new one when alloc is nil); its values are fp16 already and need no rounding.
func decodeF16Blob(v *mil.Value, w mil.Weights, alloc func(n int) []float32) ([]float32, error) {
	b := v.Blob
	file, ok := w[b.Path]
	if !ok {
		return nil, fmt.Errorf("weight file %q not found", b.Path)
	}
	dt, raw, err := mil.ReadBlob(file, b.Offset)
	if err != nil {
		return nil, fmt.Errorf("weight file %q: %w", b.Path, err)
	}
	if dt != v.Type.DType {
		return nil, fmt.Errorf("weight file %q offset %d: blob holds %s, the value is %s", b.Path, b.Offset, dt, v.Type)
	}
	n := v.Type.NumElements()
	if n < 0 || len(raw) != 2*n {
		return nil, fmt.Errorf("weight file %q offset %d: blob has %d bytes, %s needs %d", b.Path, b.Offset, len(raw), v.Type, 2*n)
	}
	var data []float32
	if alloc != nil {
		data = alloc(n)
	} else {
		data = make([]float32, n)
	}
	if err := half.DecodeF16(data, raw); err != nil {
		return nil, fmt.Errorf("weight file %q offset %d: %w", b.Path, b.Offset, err)
	}
	return data, nil
}

// result makes the tensor of op's result i with a fresh buffer of its declared type.
func (c *compiler) result(op *mil.Op, i int) (*tensor, error) {
	t, err := c.resultNoBuf(op, i)
	if err != nil {
		return nil, err
	}
	t.data = c.plan.alloc(t.name, numel(t.shape))
	return t, nil
}

// resultNoBuf makes the tensor of op's result i without a buffer, for results that alias an input.
func (c *compiler) resultNoBuf(op *mil.Op, i int) (*tensor, error) {
	if i >= len(op.Results) || op.Results[i] == nil {
		return nil, opErr(op, "want at least %d results, got %d", i+1, len(op.Results))
	}
	r := op.Results[i]
	if r.Type.Kind != mil.TensorKind && r.Type.Kind != mil.ScalarKind {
		return nil, opErr(op, "result %s: type %s is not a tensor", r.Name, r.Type)
	}
	for _, d := range r.Type.Shape {
		if d < 0 {
			return nil, opErr(op, "result %s: type %s has a negative dim", r.Name, r.Type)
		}
	}
	return &tensor{name: r.Name, shape: append([]int{}, r.Type.Shape...), dtype: r.Type.DType}, nil
}

// xAndResult reads op's tensor argument x and makes op's result 0 with a fresh buffer.
func (c *compiler) xAndResult(op *mil.Op) (x, out *tensor, err error) { return c.xAnd(op, c.result) }

// xAndView reads op's tensor argument x and makes op's result 0 without a buffer, for results that
// alias x.
func (c *compiler) xAndView(op *mil.Op) (x, out *tensor, err error) { return c.xAnd(op, c.resultNoBuf) }

// xAnd reads op's tensor argument x, then makes op's result 0 with res.
func (c *compiler) xAnd(op *mil.Op, res func(*mil.Op, int) (*tensor, error)) (x, out *tensor, err error) {
	if x, err = c.tensorArg(op, "x"); err != nil {
		return nil, nil, err
	}
	if out, err = res(op, 0); err != nil {
		return nil, nil, err
	}
	return x, out, nil
}

// xAndSameShape is xAndResult for ops whose result has x's shape, which it checks.
func (c *compiler) xAndSameShape(op *mil.Op) (x, out *tensor, err error) {
	if x, out, err = c.xAndResult(op); err != nil {
		return nil, nil, err
	}
	if err := checkShape(op, "result", out.shape, x.shape); err != nil {
		return nil, nil, err
	}
	return x, out, nil
}

// add records a compiled step and defines its results.
func (c *compiler) add(s step) {
	for _, t := range s.outs {
		c.env[t.name] = t
		c.plan.view(t.name, t.data)
	}
	if len(s.op.Results) > 0 && s.op.Results[0] != nil {
		s.result = s.op.Results[0].Name
	}
	if !s.exact && !s.fused && isFloatStep(s) {
		for _, t := range s.outs {
			if isFloat16(t.dtype) {
				x := t.data
				s.round = append(s.round, rounder{n: len(x), fn: func(lo, hi int) { roundSlice(x[lo:hi]) }})
			}
		}
	}
	c.steps = append(c.steps, s)
}

// rounds reports whether results of type t are rounded to fp16: FP16 numerics and an fp16 dtype.
func (c *compiler) rounds(t *tensor) bool { return c.opts.Numerics == FP16 && isFloat16(t.dtype) }

// isFloatStep reports whether a step's rounding can matter: aliasing steps hold input values already.
func isFloatStep(s step) bool { return s.run != nil }

// checkShape reports an error unless a tensor has the shape the op's result needs.
func checkShape(op *mil.Op, what string, got, want []int) error {
	if !sameShape(got, want) {
		return opErr(op, "%s has shape %v, want %v", what, got, want)
	}
	return nil
}
