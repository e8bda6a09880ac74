package mil

import (
	"fmt"
	"slices"
	"sort"
	"unsafe"
)

// The vector-Jacobian rules of Grad, one per op kind. A rule is given the op and the cotangent ct of its
// result (whose shape broadcasts to the result's: a reduction's cotangent travels unbroadcast until an op
// needs it whole) and contributes the cotangents of its active operands. Rules emit only ops the
// hardware is known to run (ane.HardwareOps: mul, add, sub, real_div, pow, relu, reduce_sum, matmul,
// conv, reshape, transpose, slice_by_size, concat, cast) in the forms the reference kernels use.

type gradRule func(g *grader, op *Op, ct *Var) error

var gradRules = map[string]gradRule{
	"add":           gradAdd,
	"sub":           gradSub,
	"mul":           gradMul,
	"real_div":      gradRealDiv,
	"pow":           gradPow,
	"sigmoid":       gradSigmoid,
	"tanh":          gradTanh,
	"relu":          gradRelu,
	"softmax":       gradSoftmax,
	"reduce_sum":    gradReduceSum,
	"reshape":       gradReshape,
	"transpose":     gradTranspose,
	"slice_by_size": gradSliceBySize,
	"concat":        gradConcat,
	"cast":          gradCast,
	"matmul":        gradMatmul,
	"conv":          gradConv,
}

// GradOps returns the op kinds Grad differentiates, sorted.
func GradOps() []string {
	var kinds []string
	for k := range gradRules {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// binaryOperands returns the forward names of x and y and whether each is active.
func (g *grader) binaryOperands(op *Op) (x, y string, ax, ay bool) {
	x, y = argName(op, "x"), argName(op, "y")
	return x, y, g.active[x], g.active[y]
}

// give contributes v, reduced to forward var name's shape, to name's cotangent.
func (g *grader) give(name string, v *Var) error {
	u, err := g.unbroadcast(v, g.types[name].Shape)
	if err != nil {
		return err
	}
	g.contribute(name, u)
	return nil
}

func gradAdd(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	if ax {
		if err := g.give(x, ct); err != nil {
			return err
		}
	}
	if ay {
		return g.give(y, ct)
	}
	return nil
}

func gradSub(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	if ax {
		if err := g.give(x, ct); err != nil {
			return err
		}
	}
	if ay {
		n, err := g.op("mul", "neg", Args{"x": ct, "y": -1.0})
		if err != nil {
			return err
		}
		return g.give(y, n)
	}
	return nil
}

func gradMul(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	if ax {
		yv, _, err := g.arg(op, "y")
		if err != nil {
			return err
		}
		d, err := g.op("mul", "dmul", Args{"x": ct, "y": yv})
		if err != nil {
			return err
		}
		if err := g.give(x, d); err != nil {
			return err
		}
	}
	if ay {
		xv, _, err := g.arg(op, "x")
		if err != nil {
			return err
		}
		d, err := g.op("mul", "dmul", Args{"x": ct, "y": xv})
		if err != nil {
			return err
		}
		return g.give(y, d)
	}
	return nil
}

// gradRealDiv: z = x / y; dx = ct / y, dy = -(ct * z) / y.
func gradRealDiv(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	yv, _, err := g.arg(op, "y")
	if err != nil {
		return err
	}
	if ax {
		d, err := g.op("real_div", "ddiv", Args{"x": ct, "y": yv})
		if err != nil {
			return err
		}
		if err := g.give(x, d); err != nil {
			return err
		}
	}
	if ay {
		z, err := g.val(op.Results[0].Name)
		if err != nil {
			return err
		}
		t, err := g.op("mul", "ddiv", Args{"x": ct, "y": z})
		if err == nil {
			t, err = g.op("real_div", "ddiv", Args{"x": t, "y": yv})
		}
		if err == nil {
			t, err = g.op("mul", "ddiv", Args{"x": t, "y": -1.0})
		}
		if err != nil {
			return err
		}
		return g.give(y, t)
	}
	return nil
}

// gradPow: z = x ** c for a constant scalar c; dx = ct * c * x ** (c - 1).
func gradPow(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	if ay {
		return fmt.Errorf("the exponent %s depends on a wrt input: only a constant exponent has a rule (its gradient needs log, which the ANE refuses)", y)
	}
	if !ax {
		return nil
	}
	cv := g.consts.ArgValue(op, "y")
	if cv == nil || cv.Type.Kind != ScalarKind && cv.Type.NumElements() != 1 || len(cv.Nums) != 1 {
		return fmt.Errorf("the exponent is not a constant scalar: only pow(x, c) with a scalar c has a rule")
	}
	c := cv.Nums[0]
	if c == 1 {
		return g.give(x, ct)
	}
	xv, _, err := g.arg(op, "x")
	if err == nil && c != 2 { // x ** (c - 1); for c = 2 that is x itself: no pow
		xv, err = g.op("pow", "dpow", Args{"x": xv, "y": c - 1})
	}
	var d *Var
	if err == nil {
		d, err = g.op("mul", "dpow", Args{"x": ct, "y": xv})
	}
	if err == nil {
		d, err = g.op("mul", "dpow", Args{"x": d, "y": c})
	}
	if err != nil {
		return err
	}
	return g.give(x, d)
}

// gradSigmoid: dx = ct * s * (1 - s), s the sigmoid (saved or recomputed).
func gradSigmoid(g *grader, op *Op, ct *Var) error {
	s, err := g.val(op.Results[0].Name)
	if err != nil {
		return err
	}
	om, err := g.op("sub", "dsig", Args{"x": 1.0, "y": s})
	if err == nil {
		om, err = g.op("mul", "dsig", Args{"x": s, "y": om})
	}
	if err == nil {
		om, err = g.op("mul", "dsig", Args{"x": ct, "y": om})
	}
	if err != nil {
		return err
	}
	return g.give(argName(op, "x"), om)
}

// gradTanh: dx = ct * (1 - t * t), t the tanh.
func gradTanh(g *grader, op *Op, ct *Var) error {
	t, err := g.val(op.Results[0].Name)
	if err != nil {
		return err
	}
	tt, err := g.op("mul", "dtanh", Args{"x": t, "y": t})
	if err == nil {
		tt, err = g.op("sub", "dtanh", Args{"x": 1.0, "y": tt})
	}
	if err == nil {
		tt, err = g.op("mul", "dtanh", Args{"x": ct, "y": tt})
	}
	if err != nil {
		return err
	}
	return g.give(argName(op, "x"), tt)
}

// reluStep is the scale that turns relu's output y >= 0 into its derivative: min(y * reluStep, 1) is 1
// for every y >= 1/reluStep (fp16's smallest normal is 6e-5) and 0 at y = 0.
const reluStep = 32768

// gradRelu: dx = ct * [y > 0] with y = relu(x), the step built from sub, mul and relu alone (the ANE has
// no comparison known to run): a = min(y, 1) = 1 - relu(1 - y), step = 1 - relu(1 - a * 32768). Clamping
// first keeps every intermediate finite in fp16.
func gradRelu(g *grader, op *Op, ct *Var) error {
	y, err := g.val(op.Results[0].Name)
	if err != nil {
		return err
	}
	v := y
	for _, scale := range []float64{1, reluStep} {
		if scale != 1 {
			if v, err = g.op("mul", "drelu", Args{"x": v, "y": scale}); err != nil {
				return err
			}
		}
		u, err := g.op("sub", "drelu", Args{"x": 1.0, "y": v})
		if err == nil {
			u, err = g.op("relu", "drelu", Args{"x": u})
		}
		if err == nil {
			v, err = g.op("sub", "drelu", Args{"x": 1.0, "y": u})
		}
		if err != nil {
			return err
		}
	}
	d, err := g.op("mul", "drelu", Args{"x": ct, "y": v})
	if err != nil {
		return err
	}
	return g.give(argName(op, "x"), d)
}

// gradSoftmax: dx = s * (ct - sum(s * ct, axis)), s the softmax, with the row's weighted mean taken
// away twice: d = ct - sum(s*ct), then d - sum(s*d). In fp16 the mean, rounded once, carries an error
// of its own magnitude times 2^-11 into every element of the row, where d is often far smaller than
// the mean (the cancellation): the second pass takes away what the first left, in d's own scale, so
// the row of dx sums to zero as it should. The chain the emulator fuses.
func gradSoftmax(g *grader, op *Op, ct *Var) error {
	s, err := g.val(op.Results[0].Name)
	if err != nil {
		return err
	}
	rank := len(s.Type.Shape)
	axis := -1
	if v := g.consts.ArgValue(op, "axis"); v != nil && len(v.Nums) == 1 {
		axis = int(v.Nums[0])
	}
	if axis == rank-1 {
		axis = -1
	}
	if ct, err = g.full(ct, s.Type.Shape); err != nil {
		return err
	}
	// center subtracts from v its weighted mean over the axis, sum(s * v).
	center := func(v *Var) (*Var, error) {
		a, err := g.op("mul", "dsm", Args{"x": s, "y": v})
		if err == nil {
			a, err = g.op("reduce_sum", "dsm", Args{"x": a, "axes": []int{axis}, "keep_dims": true})
		}
		if err == nil {
			a, err = g.op("sub", "dsm", Args{"x": v, "y": a})
		}
		return a, err
	}
	a, err := center(ct)
	if err == nil {
		a, err = center(a)
	}
	if err == nil {
		a, err = g.op("mul", "dsm", Args{"x": s, "y": a})
	}
	if err != nil {
		return err
	}
	g.contribute(argName(op, "x"), a)
	return nil
}

// gradReduceSum: the cotangent, with the reduced axes kept, broadcasts back over them.
func gradReduceSum(g *grader, op *Op, ct *Var) error {
	x := argName(op, "x")
	xs := g.types[x].Shape
	keep := false
	if v := g.consts.ArgValue(op, "keep_dims"); v != nil {
		keep, _ = v.Bool()
	}
	if !keep {
		axes := make([]int, len(xs))
		for i := range axes {
			axes[i] = i
		}
		if v := g.consts.ArgValue(op, "axes"); v != nil {
			var err error
			if axes, err = v.Ints(); err != nil {
				return err
			}
		}
		kept := slices.Clone(xs)
		for _, a := range axes {
			if a < 0 {
				a += len(xs)
			}
			kept[a] = 1
		}
		var err error
		if ct, err = g.full(ct, op.Results[0].Type.Shape); err != nil {
			return err
		}
		if ct, err = g.op("reshape", "dsum", Args{"x": ct, "shape": kept}); err != nil {
			return err
		}
	}
	g.contribute(x, ct)
	return nil
}

func gradReshape(g *grader, op *Op, ct *Var) error {
	x := argName(op, "x")
	ct, err := g.full(ct, op.Results[0].Type.Shape)
	if err == nil {
		ct, err = g.op("reshape", "dreshape", Args{"x": ct, "shape": g.types[x].Shape})
	}
	if err != nil {
		return err
	}
	g.contribute(x, ct)
	return nil
}

func gradTranspose(g *grader, op *Op, ct *Var) error {
	x := argName(op, "x")
	pv := g.consts.ArgValue(op, "perm")
	perm, err := pv.Ints()
	if err != nil {
		return err
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		if p < 0 {
			p += len(perm)
		}
		inv[p] = i
	}
	if ct, err = g.full(ct, op.Results[0].Type.Shape); err == nil {
		ct, err = g.op("transpose", "dtranspose", Args{"x": ct, "perm": inv})
	}
	if err != nil {
		return err
	}
	g.contribute(x, ct)
	return nil
}

// gradSliceBySize: a slice that cuts one axis gives a piece, joined with its siblings when the var's
// cotangent is summed (joinPieces); one that cuts several is padded with zeros back to x's shape, one
// concat per axis cut.
func gradSliceBySize(g *grader, op *Op, ct *Var) error {
	x := argName(op, "x")
	xs := g.types[x].Shape
	begin, err := g.consts.ArgValue(op, "begin").Ints()
	if err != nil {
		return err
	}
	size, err := g.consts.ArgValue(op, "size").Ints()
	if err != nil {
		return err
	}
	start, extent, err := SliceBySizeBounds(xs, begin, size)
	if err != nil {
		return err
	}
	if ct, err = g.full(ct, extent); err != nil {
		return err
	}
	var cut []int
	for d := range xs {
		if extent[d] != xs[d] {
			cut = append(cut, d)
		}
	}
	switch {
	case !g.active[x]:
		return nil
	case len(cut) == 0:
		g.contribute(x, ct)
		return nil
	case len(cut) == 1:
		g.pieces[x] = append(g.pieces[x], piece{v: ct, axis: cut[0], start: start[cut[0]]})
		return nil
	}
	for _, d := range cut {
		if ct, err = g.pad(ct, d, start[d], xs[d]); err != nil {
			return err
		}
	}
	g.contribute(x, ct)
	return nil
}

// gradConcat: each value's cotangent is its block of the result's.
func gradConcat(g *grader, op *Op, ct *Var) error {
	if v := g.consts.ArgValue(op, "interleave"); v != nil {
		if il, _ := v.Bool(); il {
			return fmt.Errorf("no rule for an interleaved concat")
		}
	}
	rs := op.Results[0].Type.Shape
	axis := int(g.consts.ArgValue(op, "axis").Nums[0])
	if axis < 0 {
		axis += len(rs)
	}
	ct, err := g.full(ct, rs)
	if err != nil {
		return err
	}
	off := 0
	for _, o := range op.Arg("values").Operands {
		var shape []int
		name := ""
		if o.Ref != nil {
			name, shape = o.Ref.Name, g.types[o.Ref.Name].Shape
		} else {
			shape = o.Lit.Type.Shape
		}
		if g.active[name] {
			begin := make([]int, len(rs))
			begin[axis] = off
			s, err := g.op("slice_by_size", "dconcat", Args{"x": ct, "begin": begin, "size": shape})
			if err != nil {
				return err
			}
			g.contribute(name, s)
		}
		off += shape[axis]
	}
	return nil
}

func gradCast(g *grader, op *Op, ct *Var) error {
	x := argName(op, "x")
	dt := g.types[x].DType
	if ct.Type.DType != dt {
		var err error
		if ct, err = g.op("cast", "dcast", Args{"x": ct, "dtype": dt.String()}); err != nil {
			return err
		}
	}
	g.contribute(x, ct)
	return nil
}

// gradMatmul: with A = op(x), B = op(y) (op a transpose when asked), z = A B, dA = ct B^T, dB = A^T ct,
// written as one matmul each with the transposes folded into its flags.
func gradMatmul(g *grader, op *Op, ct *Var) error {
	x, y, ax, ay := g.binaryOperands(op)
	flag := func(name string) bool {
		if v := g.consts.ArgValue(op, name); v != nil {
			b, _ := v.Bool()
			return b
		}
		return false
	}
	tx, ty := flag("transpose_x"), flag("transpose_y")
	if len(g.types[x].Shape) < 2 || len(g.types[y].Shape) < 2 {
		return fmt.Errorf("no rule for a matmul of a vector (rank 1): reshape it to a matrix")
	}
	ct, err := g.full(ct, op.Results[0].Type.Shape)
	if err != nil {
		return err
	}
	// Each cotangent needs the other operand only: fetch (or replay) just that one, so that nothing
	// the backward computes goes unused.
	mm := func(a, b *Var, ta, tb bool) (*Var, error) {
		return g.op("matmul", "dmm", Args{"x": a, "y": b, "transpose_x": ta, "transpose_y": tb})
	}
	if ax {
		yv, _, err := g.arg(op, "y")
		if err != nil {
			return err
		}
		var d *Var
		switch {
		case !tx && !ty:
			d, err = mm(ct, yv, false, true)
		case tx && !ty:
			d, err = mm(yv, ct, false, true)
		case !tx && ty:
			d, err = mm(ct, yv, false, false)
		default:
			d, err = mm(yv, ct, true, true)
		}
		if err == nil {
			err = g.give(x, d)
		}
		if err != nil {
			return err
		}
	}
	if ay {
		xv, _, err := g.arg(op, "x")
		if err != nil {
			return err
		}
		var d *Var
		switch {
		case !tx && !ty:
			d, err = mm(xv, ct, true, false)
		case tx && !ty:
			d, err = mm(xv, ct, false, false)
		case !tx && ty:
			d, err = mm(ct, xv, true, false)
		default:
			d, err = mm(ct, xv, true, true)
		}
		if err == nil {
			err = g.give(y, d)
		}
		return err
	}
	return nil
}

// gradConv: a 1x1 conv (stride 1, no padding, one group) is a product over channels: dx is the conv of
// the cotangent with the transposed weight, dW the product of the cotangent with x over the columns.
func gradConv(g *grader, op *Op, ct *Var) error {
	x, w := argName(op, "x"), argName(op, "weight")
	xs, ws := g.types[x].Shape, g.types[w].Shape
	cp, err := ConvParamsOf(g.consts, op, xs, ws)
	if err != nil {
		return err
	}
	for i := 2; i < len(ws); i++ {
		if ws[i] != 1 || cp.Strides[i-2] != 1 || cp.Dilations[i-2] != 1 || cp.PadBegin[i-2] != 0 || cp.PadEnd[i-2] != 0 {
			return fmt.Errorf("no rule for a conv other than 1x1 with stride 1 and no padding (weight %v)", ws)
		}
	}
	if cp.Groups != 1 {
		return fmt.Errorf("no rule for a grouped conv (groups %d)", cp.Groups)
	}
	if ct, err = g.full(ct, op.Results[0].Type.Shape); err != nil {
		return err
	}
	perm := []int{1, 0}
	for i := 2; i < len(ws); i++ {
		perm = append(perm, i)
	}
	if g.active[x] {
		var wt *Var
		if wv := g.consts[w]; wv != nil && !g.active[w] {
			if wt, err = g.transposedWeight(w, wv, ws); err != nil {
				return err
			}
		} else {
			wv, _, err := g.arg(op, "weight")
			if err != nil {
				return err
			}
			if wt, err = g.op("transpose", "dconv_w", Args{"x": wv, "perm": perm}); err != nil {
				return err
			}
		}
		d, err := g.op("conv", "dconv", Args{"x": ct, "weight": wt, "strides": unitDims(len(ws) - 2), "dilations": unitDims(len(ws) - 2),
			"pad_type": "valid", "pad": make([]int, 2*(len(ws)-2)), "groups": 1})
		if err != nil {
			return err
		}
		g.contribute(x, d)
	}
	if g.active[w] {
		if xs[0] != 1 {
			return fmt.Errorf("no rule for the weight gradient of a conv with batch %d: use batch 1", xs[0])
		}
		cols := 1
		for _, d := range xs[2:] {
			cols *= d
		}
		xv, _, err := g.arg(op, "x")
		if err != nil {
			return err
		}
		gm, err := g.op("reshape", "dconv_g", Args{"x": ct, "shape": []int{1, 1, ws[0], cols}})
		if err != nil {
			return err
		}
		xm, err := g.op("reshape", "dconv_x", Args{"x": xv, "shape": []int{1, 1, ws[1], cols}})
		if err != nil {
			return err
		}
		d, err := g.op("matmul", "dconv_dw", Args{"x": gm, "y": xm, "transpose_x": false, "transpose_y": true})
		if err == nil {
			d, err = g.op("reshape", "dconv_dw", Args{"x": d, "shape": ws})
		}
		if err != nil {
			return err
		}
		g.contribute(w, d)
	}
	return nil
}

// transposedWeight adds the const weight w [Cout, Cin, 1, ...] transposed to [Cin, Cout, 1, ...], in a
// weight file of its own: a blob's bytes are moved as they are (no decoding), other values converted.
func (g *grader) transposedWeight(w string, v *Value, ws []int) (*Var, error) {
	co, ci := ws[0], ws[1]
	shape := append([]int{ci, co}, ws[2:]...)
	var c *Var
	if v.Blob != nil {
		dt, data, err := v.blobData(g.w)
		if err != nil {
			return nil, fmt.Errorf("weight %s: %w", w, err)
		}
		c = g.b.WeightBytes(g.fresh(w+"_t"), dt, shape, transposeBytes(data, co, ci, dt.Bits()/8))
	} else {
		data, err := v.Float32s(g.w)
		if err != nil {
			return nil, fmt.Errorf("weight %s: %w", w, err)
		}
		t := make([]float32, len(data))
		for o := range co {
			for i := range ci {
				t[i*co+o] = data[o*ci+i]
			}
		}
		c = g.b.Weight(g.fresh(w+"_t"), v.Type.DType, shape, t)
	}
	if c == nil {
		err := g.b.err
		g.b.err = nil
		return nil, err
	}
	return c, nil
}

// transposeBytes returns the rows x cols matrix of size-byte elements in data transposed, in blocks
// that stay in the cache (2-byte elements, fp16's and bf16's, as uint16s).
func transposeBytes(data []byte, rows, cols, size int) []byte {
	out := make([]byte, len(data))
	const blk = 32
	if size == 2 && len(data) > 0 && uintptr(unsafe.Pointer(&data[0]))%2 == 0 {
		src := unsafe.Slice((*uint16)(unsafe.Pointer(&data[0])), rows*cols)
		dst := unsafe.Slice((*uint16)(unsafe.Pointer(&out[0])), rows*cols)
		for r0 := 0; r0 < rows; r0 += blk {
			for c0 := 0; c0 < cols; c0 += blk {
				for r := r0; r < min(r0+blk, rows); r++ {
					row := src[r*cols : (r+1)*cols]
					for c := c0; c < min(c0+blk, cols); c++ {
						dst[c*rows+r] = row[c]
					}
				}
			}
		}
		return out
	}
	for r := range rows {
		for c := range cols {
			copy(out[(c*rows+r)*size:(c*rows+r+1)*size], data[(r*cols+c)*size:(r*cols+c+1)*size])
		}
	}
	return out
}

func unitDims(n int) []int { return slices.Repeat([]int{1}, n) }
