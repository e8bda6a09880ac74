package mil

import (
	"fmt"
	"slices"
)

// Elementwise ops. Binary ops take x and y of one dtype and broadcast them numpy-style: shapes are aligned
// at their last dims, and each pair of dims must be equal or one of them 1. A scalar broadcasts to any
// shape. The result has x's dtype.

func init() {
	register(&OpDef{Name: "const", Doc: "a constant: the val attribute, named by the name attribute"})
	binary := []struct{ name, doc string }{
		{"add", "x + y"},
		{"sub", "x - y"},
		{"mul", "x * y"},
		{"real_div", "x / y"},
		{"pow", "x ** y"},
		{"maximum", "max(x, y)"},
		{"minimum", "min(x, y)"},
	}
	for _, b := range binary {
		register(&OpDef{
			Name: b.name,
			Doc:  "elementwise " + b.doc + " with broadcasting",
			Args: []ArgDef{
				argX(numericTypes),
				{Name: "y", Required: true, DTypes: numericTypes, SameAs: "x", Doc: "second operand, x's dtype"},
			},
			infer: inferBinary,
		})
	}
	unary := []struct{ name, doc string }{
		{"sqrt", "square root"},
		{"exp", "e ** x"},
		{"sigmoid", "1 / (1 + exp(-x))"},
		{"silu", "x * sigmoid(x)"},
		{"relu", "max(x, 0)"},
		{"tanh", "hyperbolic tangent"},
	}
	for _, u := range unary {
		register(&OpDef{Name: u.name, Doc: "elementwise " + u.doc, Args: []ArgDef{argX(floatTypes)}, infer: inferSame})
	}
	// rsqrt and log add epsilon first; the defaults are coremltools' (1e-12 and 1e-45).
	register(&OpDef{
		Name: "rsqrt",
		Doc:  "elementwise 1 / sqrt(x + epsilon)",
		Args: []ArgDef{argX(floatTypes),
			{Name: "epsilon", Const: true, Shape: ScalarArg, DTypes: floatTypes, SameAs: "x", Default: ScalarValue(FP32, 1e-12), Doc: "added to x; default 1e-12"}},
		infer: inferSame,
	})
	register(&OpDef{
		Name: "log",
		Doc:  "elementwise natural log of (x + epsilon)",
		Args: []ArgDef{argX(floatTypes),
			{Name: "epsilon", Const: true, Shape: ScalarArg, DTypes: floatTypes, SameAs: "x", Default: ScalarValue(FP32, 1e-45), Doc: "added to x; default 1e-45"}},
		infer: inferSame,
	})
	register(&OpDef{
		Name: "gelu",
		Doc:  "elementwise GELU: EXACT x*Phi(x), TANH_APPROXIMATION, or SIGMOID_APPROXIMATION x*sigmoid(1.702x)",
		Args: []ArgDef{argX(floatTypes),
			withDefault(constString("mode", false, `"EXACT" (default), "TANH_APPROXIMATION" or "SIGMOID_APPROXIMATION"`), StringValue("EXACT"))},
		infer: inferGelu,
	})
}

// GeluModes are the values gelu's mode argument accepts.
var GeluModes = []string{"EXACT", "TANH_APPROXIMATION", "SIGMOID_APPROXIMATION"}

func inferSame(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	return one(tensorType(x.DType, x.Shape))
}

func inferGelu(a *opArgs) ([]Type, error) {
	mode, err := a.strOr("mode", "EXACT")
	if err != nil {
		return nil, err
	}
	if !slices.Contains(GeluModes, mode) {
		return nil, fmt.Errorf("argument \"mode\": %q is not one of %q", mode, GeluModes)
	}
	return inferSame(a)
}

func inferBinary(a *opArgs) ([]Type, error) {
	x, y := a.typ("x"), a.typ("y")
	shape, err := BroadcastShapes(x.Shape, y.Shape)
	if err != nil {
		return nil, err
	}
	return one(tensorType(x.DType, shape))
}

// BroadcastShapes returns the numpy broadcast of shapes a and b, or an error naming the dims that clash.
func BroadcastShapes(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 1; i <= n; i++ {
		da, db := 1, 1
		if i <= len(a) {
			da = a[len(a)-i]
		}
		if i <= len(b) {
			db = b[len(b)-i]
		}
		switch {
		case da == db || db == 1:
			out[n-i] = da
		case da == 1:
			out[n-i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast: dim %d is %d against %d", a, b, -i, da, db)
		}
	}
	return out, nil
}
