package mil

import "fmt"

// Ops that work along axes: softmax, reductions, layer_norm.

func init() {
	register(&OpDef{
		Name: "softmax",
		Doc:  "exp(x) / sum(exp(x)) along axis",
		Args: []ArgDef{argX(floatTypes), withDefault(constInt("axis", false, "the axis to normalise; default -1"), ScalarValue(Int32, -1))},
		infer: func(a *opArgs) ([]Type, error) {
			x := a.typ("x")
			ax, err := a.intOr("axis", -1)
			if err != nil {
				return nil, err
			}
			if _, err := normAxis("axis", ax, x.Rank()); err != nil {
				return nil, err
			}
			return inferSame(a)
		},
	})
	for _, r := range []struct{ name, doc string }{
		{"reduce_sum", "sum"}, {"reduce_mean", "mean"}, {"reduce_max", "maximum"},
	} {
		register(&OpDef{
			Name: r.name,
			Doc:  r.doc + " of x over axes",
			Args: []ArgDef{
				argX(numericTypes),
				constInts("axes", false, "axes to reduce, negative from the end; default all axes"),
				constBool("keep_dims", "keep reduced axes as size 1; default false"),
			},
			infer: inferReduce,
		})
	}
	register(&OpDef{
		Name: "layer_norm",
		Doc:  "(x - mean) / sqrt(var + epsilon) * gamma + beta over axes",
		Args: []ArgDef{
			argX(floatTypes),
			constInts("axes", false, "axes to normalise over; default all axes"),
			{Name: "gamma", Const: true, DTypes: floatTypes, SameAs: "x", Doc: "scale, shape x.shape[axes]; default 1"},
			{Name: "beta", Const: true, DTypes: floatTypes, SameAs: "x", Doc: "offset, shape x.shape[axes]; default 0"},
			{Name: "epsilon", Const: true, Shape: ScalarArg, DTypes: floatTypes, SameAs: "x", Default: ScalarValue(FP32, 1e-5), Doc: "default 1e-5"},
		},
		infer: inferLayerNorm,
	})
}

// reduceAxes returns the normalised axes argument, or every axis when it is absent.
func reduceAxes(a *opArgs, rank int) ([]int, error) {
	axes, err := a.ints("axes")
	if err != nil {
		return nil, err
	}
	if !a.has("axes") {
		all := make([]int, rank)
		for i := range all {
			all[i] = i
		}
		return all, nil
	}
	return normAxes("axes", axes, rank)
}

func inferReduce(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	axes, err := reduceAxes(a, x.Rank())
	if err != nil {
		return nil, err
	}
	keep, err := a.boolOr("keep_dims", false)
	if err != nil {
		return nil, err
	}
	reduced := make([]bool, x.Rank())
	for _, ax := range axes {
		reduced[ax] = true
	}
	var shape []int
	for i, d := range x.Shape {
		switch {
		case !reduced[i]:
			shape = append(shape, d)
		case keep:
			shape = append(shape, 1)
		}
	}
	return one(tensorType(x.DType, shape))
}

// inferLayerNorm: gamma and beta must have shape x.shape[axes] with axes in the order given (coremltools
// reads it so); a scalar gamma or beta is not accepted.
func inferLayerNorm(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	axes, err := reduceAxes(a, x.Rank())
	if err != nil {
		return nil, err
	}
	want := make([]int, len(axes))
	for i, ax := range axes {
		want[i] = x.Shape[ax]
	}
	for _, name := range []string{"gamma", "beta"} {
		if !a.has(name) {
			continue
		}
		if t := a.typ(name); !sameInts(t.Shape, want) {
			return nil, fmt.Errorf("argument %q has shape %v, want x.shape[axes] = %v", name, t.Shape, want)
		}
	}
	return inferSame(a)
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
