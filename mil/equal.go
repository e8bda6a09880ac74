package mil

import "math"

// Equal reports whether a and b are the same program: the same version, attributes, functions, ops,
// names, types and literal values. It ignores positions and the spelling of scalars (Value.Style), so a
// parsed program is Equal to the one it was printed from. A rank-0 tensor literal equals the scalar
// literal of its dtype, nil and empty lists are equal, and floats compare by bits except that every NaN
// equals every other.
func Equal(a, b *Program) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Version == b.Version && equalAttrs(a.Attrs, b.Attrs) &&
		equalSlices(a.Funcs, b.Funcs, equalFunc)
}

func equalSlices[T any](a, b []T, eq func(x, y T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eq(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalFunc(a, b *Func) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.Opset == b.Opset && equalAttrs(a.Attrs, b.Attrs) &&
		equalSlices(a.Inputs, b.Inputs, equalVar) && equalSlices(a.Ops, b.Ops, equalOp) &&
		equalSlices(a.Outputs, b.Outputs, func(x, y Ref) bool { return x.Name == y.Name })
}

func equalVar(a, b *Var) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.Type.Equal(b.Type)
}

func equalOp(a, b *Op) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Kind == b.Kind && equalSlices(a.Results, b.Results, equalVar) &&
		equalSlices(a.Args, b.Args, equalArg) && equalAttrs(a.Attrs, b.Attrs)
}

func equalArg(a, b *Arg) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Name == b.Name && a.Tuple == b.Tuple && equalSlices(a.Operands, b.Operands, equalOperand)
}

func equalOperand(a, b Operand) bool {
	switch {
	case a.Ref != nil || b.Ref != nil:
		return a.Ref != nil && b.Ref != nil && a.Ref.Name == b.Ref.Name && a.Lit == nil && b.Lit == nil
	default:
		return equalValue(a.Lit, b.Lit)
	}
}

func equalAttrs(a, b []*Attr) bool {
	return equalSlices(a, b, func(x, y *Attr) bool {
		if x == nil || y == nil {
			return x == y
		}
		return x.Name == y.Name && equalValue(x.Value, y.Value)
	})
}

func equalValue(a, b *Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !scalarForm(a.Type).Equal(scalarForm(b.Type)) || !equalSlices(a.Strs, b.Strs, func(x, y string) bool { return x == y }) ||
		!equalSlices(a.Nums, b.Nums, sameFloat) || !equalSlices(a.Elems, b.Elems, equalValue) {
		return false
	}
	if a.Blob == nil || b.Blob == nil {
		return a.Blob == b.Blob
	}
	return *a.Blob == *b.Blob
}

// scalarForm returns the scalar type for a rank-0 tensor type, else t.
func scalarForm(t Type) Type {
	if t.Kind == TensorKind && len(t.Shape) == 0 {
		return Scalar(t.DType)
	}
	return t
}

// sameFloat compares by bits (so 0 and -0 differ), with all NaNs equal.
func sameFloat(x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return math.IsNaN(x) && math.IsNaN(y)
	}
	return math.Float64bits(x) == math.Float64bits(y)
}
