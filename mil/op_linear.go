package mil

import (
	"fmt"
	"slices"
)

// Ops that multiply by weights: conv, matmul, linear.

func init() {
	register(&OpDef{
		Name: "conv",
		Doc:  "convolution of x [N, Cin, *spatial] with weight [Cout, Cin/groups, *kernel]",
		Args: []ArgDef{
			argX(floatTypes),
			{Name: "weight", Required: true, DTypes: floatTypes, SameAs: "x", Doc: "[Cout, Cin/groups, *kernel]"},
			{Name: "bias", Const: true, Shape: VectorArg, DTypes: floatTypes, SameAs: "x", Doc: "[Cout]; default 0"},
			constInts("strides", false, "one per spatial dim; default 1"),
			withDefault(constString("pad_type", false, `"valid" (default), "same", "same_lower" or "custom"`), StringValue("valid")),
			constInts("pad", false, "[begin, end] per spatial dim; read only when pad_type is custom"),
			constInts("dilations", false, "one per spatial dim; default 1"),
			withDefault(constInt("groups", false, "Cin and Cout are split into this many groups; default 1"), ScalarValue(Int32, 1)),
		},
		infer: inferConv,
	})
	register(&OpDef{
		Name: "matmul",
		Doc:  "matrix product of the last two dims, batch dims broadcast numpy-style",
		Args: []ArgDef{
			argX(numericTypes),
			{Name: "y", Required: true, DTypes: numericTypes, SameAs: "x", Doc: "second operand, x's dtype"},
			constBool("transpose_x", "swap x's last two dims first; default false"),
			constBool("transpose_y", "swap y's last two dims first; default false"),
		},
		infer: inferMatmul,
	})
	register(&OpDef{
		Name: "linear",
		Doc:  "x @ weight^T + bias over x's last dim",
		Args: []ArgDef{
			argX(floatTypes),
			{Name: "weight", Required: true, Const: true, DTypes: floatTypes, SameAs: "x", Doc: "[Dout, Din]"},
			{Name: "bias", Const: true, Shape: VectorArg, DTypes: floatTypes, SameAs: "x", Doc: "[Dout]; default 0"},
		},
		infer: inferLinear,
	})
}

// ConvPadTypes are the values conv's pad_type argument accepts.
var ConvPadTypes = []string{"valid", "same", "same_lower", "custom"}

// ConvParams are conv's arguments with defaults applied, as the emulator needs them.
type ConvParams struct {
	Strides   []int // one per spatial dim
	Dilations []int // one per spatial dim
	PadBegin  []int // padding before each spatial dim, resolved from pad_type
	PadEnd    []int // padding after each spatial dim
	Groups    int   // channel groups
}

// inferConv: weight need not be a constant (coremltools allows computed conv weights); bias must be.
// pad is read only for pad_type "custom" (the reference passes zeros with "valid"), and "custom" without
// pad means no padding.
func inferConv(a *opArgs) ([]Type, error) {
	x, w := a.typ("x"), a.typ("weight")
	if x.Rank() < 3 || x.Rank() > 5 {
		return nil, fmt.Errorf("x has rank %d, want 3 to 5 ([N, C, *spatial])", x.Rank())
	}
	if w.Rank() != x.Rank() {
		return nil, fmt.Errorf("weight has rank %d, x has rank %d", w.Rank(), x.Rank())
	}
	p, err := convParams(a, x.Shape, w.Shape)
	if err != nil {
		return nil, err
	}
	cin, cout, g := x.Shape[1], w.Shape[0], p.Groups
	if w.Shape[1]*g != cin {
		if g == 1 {
			return nil, fmt.Errorf("weight has %d input channels, x has %d", w.Shape[1], cin)
		}
		return nil, fmt.Errorf("weight has %d input channels per group in %d groups, x has %d", w.Shape[1], g, cin)
	}
	if cout%g != 0 {
		return nil, fmt.Errorf("weight has %d output channels, not divisible by %d groups", cout, g)
	}
	if a.has("bias") {
		if b := a.typ("bias"); b.Shape[0] != cout {
			return nil, fmt.Errorf("bias has %d elements, weight has %d output channels", b.Shape[0], cout)
		}
	}
	out := []int{x.Shape[0], cout}
	for i := 2; i < x.Rank(); i++ {
		s := i - 2
		in := x.Shape[i] + p.PadBegin[s] + p.PadEnd[s]
		span := p.Dilations[s]*(w.Shape[i]-1) + 1
		if in < span {
			return nil, fmt.Errorf("spatial dim %d: padded size %d is smaller than the dilated kernel %d", s, in, span)
		}
		out = append(out, (in-span)/p.Strides[s]+1)
	}
	return one(Tensor(x.DType, out...))
}

// convParams resolves conv's optional arguments. For "same" the total padding is
// max((ceil(in/s)-1)*s + dilated kernel - in, 0), the smaller half before the dim ("same_lower": after).
func convParams(a *opArgs, xs, ws []int) (*ConvParams, error) {
	n := len(xs) - 2
	p := &ConvParams{PadBegin: make([]int, n), PadEnd: make([]int, n)}
	var err error
	vec := func(name string) ([]int, error) {
		v, err := a.ints(name)
		if err != nil || v == nil {
			out := make([]int, n)
			for i := range out {
				out[i] = 1
			}
			return out, err
		}
		if len(v) != n {
			return nil, fmt.Errorf("argument %q has %d values, want %d (one per spatial dim)", name, len(v), n)
		}
		for _, s := range v {
			if s < 1 {
				return nil, fmt.Errorf("argument %q: %v has a value below 1", name, v)
			}
		}
		return v, nil
	}
	if p.Strides, err = vec("strides"); err != nil {
		return nil, err
	}
	if p.Dilations, err = vec("dilations"); err != nil {
		return nil, err
	}
	if p.Groups, err = a.intOr("groups", 1); err != nil {
		return nil, err
	}
	if p.Groups < 1 {
		return nil, fmt.Errorf("argument \"groups\" is %d, want at least 1", p.Groups)
	}
	pt, err := a.strOr("pad_type", "valid")
	if err != nil {
		return nil, err
	}
	switch pt {
	case "valid":
	case "custom":
		pad, err := a.ints("pad")
		if err != nil {
			return nil, err
		}
		if pad == nil {
			pad = make([]int, 2*n)
		}
		if len(pad) != 2*n {
			return nil, fmt.Errorf("argument \"pad\" has %d values, want %d", len(pad), 2*n)
		}
		for i := 0; i < n; i++ {
			if pad[2*i] < 0 || pad[2*i+1] < 0 {
				return nil, fmt.Errorf("argument \"pad\": %v has a negative value", pad)
			}
			p.PadBegin[i], p.PadEnd[i] = pad[2*i], pad[2*i+1]
		}
	case "same", "same_lower":
		for i := 0; i < n; i++ {
			in, s := xs[i+2], p.Strides[i]
			span := p.Dilations[i]*(ws[i+2]-1) + 1
			total := max(((in+s-1)/s-1)*s+span-in, 0)
			small, big := total/2, total-total/2
			if pt == "same" {
				p.PadBegin[i], p.PadEnd[i] = small, big
			} else {
				p.PadBegin[i], p.PadEnd[i] = big, small
			}
		}
	default:
		return nil, fmt.Errorf("argument \"pad_type\": %q is not one of %q", pt, ConvPadTypes)
	}
	return p, nil
}

// ConvParamsOf resolves the strides, dilations, padding and groups of a conv op whose x and weight have
// the given shapes, reading its constant arguments through consts (a function's Consts).
func ConvParamsOf(consts Consts, op *Op, xShape, wShape []int) (*ConvParams, error) {
	a := &opArgs{def: opTable["conv"], vals: map[string][]ArgInfo{}}
	for _, name := range []string{"strides", "pad_type", "pad", "dilations", "groups"} {
		if v := consts.ArgValue(op, name); v != nil {
			a.vals[name] = []ArgInfo{{Type: v.Type, Value: v}}
		}
	}
	if len(xShape) < 3 || len(wShape) != len(xShape) {
		return nil, fmt.Errorf("conv: x shape %v and weight shape %v", xShape, wShape)
	}
	return convParams(a, xShape, wShape)
}

// MatmulShape returns the result shape of matmul on shapes x and y with the given transpositions.
// A rank-1 x is read as [1, K] and a rank-1 y as [K, 1], and the added dim is dropped from the result
// (numpy's rule); transpose flags do not apply to rank-1 operands.
func MatmulShape(x, y []int, tx, ty bool) ([]int, error) {
	if len(x) == 0 || len(y) == 0 {
		return nil, fmt.Errorf("matmul operands must have rank at least 1, got shapes %v and %v", x, y)
	}
	xs, ys := slices.Clone(x), slices.Clone(y)
	xv, yv := len(xs) == 1, len(ys) == 1
	if xv {
		xs = []int{1, xs[0]}
	} else if tx {
		xs[len(xs)-1], xs[len(xs)-2] = xs[len(xs)-2], xs[len(xs)-1]
	}
	if yv {
		ys = []int{ys[0], 1}
	} else if ty {
		ys[len(ys)-1], ys[len(ys)-2] = ys[len(ys)-2], ys[len(ys)-1]
	}
	m, k := xs[len(xs)-2], xs[len(xs)-1]
	k2, n := ys[len(ys)-2], ys[len(ys)-1]
	if k != k2 {
		return nil, fmt.Errorf("x's inner dim is %d, y's is %d (shapes %v and %v, transpose_x=%v, transpose_y=%v)", k, k2, x, y, tx, ty)
	}
	batch, err := BroadcastShapes(xs[:len(xs)-2], ys[:len(ys)-2])
	if err != nil {
		return nil, fmt.Errorf("batch dims: %w", err)
	}
	out := batch
	if !xv {
		out = append(out, m)
	}
	if !yv {
		out = append(out, n)
	}
	return out, nil
}

func inferMatmul(a *opArgs) ([]Type, error) {
	tx, err := a.boolOr("transpose_x", false)
	if err != nil {
		return nil, err
	}
	ty, err := a.boolOr("transpose_y", false)
	if err != nil {
		return nil, err
	}
	x, y := a.typ("x"), a.typ("y")
	shape, err := MatmulShape(x.Shape, y.Shape, tx, ty)
	if err != nil {
		return nil, err
	}
	return one(tensorType(x.DType, shape))
}

// inferLinear: weight and bias must be constants, as coremltools' linear requires; for weights computed
// in the program use matmul.
func inferLinear(a *opArgs) ([]Type, error) {
	x, w := a.typ("x"), a.typ("weight")
	if x.Rank() < 1 {
		return nil, fmt.Errorf("x is a scalar, want rank at least 1")
	}
	if w.Rank() != 2 {
		return nil, fmt.Errorf("weight has shape %v, want [Dout, Din]", w.Shape)
	}
	if din := x.Shape[x.Rank()-1]; w.Shape[1] != din {
		return nil, fmt.Errorf("weight has %d input features, x has %d", w.Shape[1], din)
	}
	if a.has("bias") {
		if b := a.typ("bias"); b.Shape[0] != w.Shape[0] {
			return nil, fmt.Errorf("bias has %d elements, weight has %d output features", b.Shape[0], w.Shape[0])
		}
	}
	out := append(slices.Clone(x.Shape[:x.Rank()-1]), w.Shape[0])
	return one(Tensor(x.DType, out...))
}
