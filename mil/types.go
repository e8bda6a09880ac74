package mil

import (
	"strconv"
	"strings"
)

// Kind says which of the MIL value types a Type is.
type Kind uint8

// The kinds of Type.
const (
	ScalarKind Kind = iota // a bare scalar such as fp16 or int32 (rank 0, spelled without tensor<>)
	TensorKind             // tensor<dtype, [dims]>; a rank-0 tensor<string, []> is a TensorKind with no dims
	TupleKind              // tuple<T1, T2, ...>
	DictKind               // dict<K, V>
	ListKind               // list<T, N> (N < 0 means unknown length)
)

// Type is the type of a MIL value. Shapes are static.
type Type struct {
	Kind  Kind   // which kind of type this is
	DType DType  // element type of a scalar or tensor
	Shape []int  // tensor dims, outermost first; empty for rank 0; -1 for an unknown dim ("?")
	Elems []Type // tuple element types; for a dict, key then value; for a list, the element type
	Len   int    // list length (ListKind), -1 when unknown
}

// Scalar returns the scalar type of dtype d.
func Scalar(d DType) Type { return Type{Kind: ScalarKind, DType: d} }

// Tensor returns the tensor type of dtype d with the given dims.
func Tensor(d DType, dims ...int) Type {
	return Type{Kind: TensorKind, DType: d, Shape: append([]int{}, dims...)}
}

// Rank is the number of dims (0 for scalars).
func (t Type) Rank() int { return len(t.Shape) }

// NumElements is the product of the dims (1 for scalars and rank-0 tensors).
func (t Type) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Equal reports whether t and u are the same type.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind || t.DType != u.DType || t.Len != u.Len ||
		len(t.Shape) != len(u.Shape) || len(t.Elems) != len(u.Elems) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	for i := range t.Elems {
		if !t.Elems[i].Equal(u.Elems[i]) {
			return false
		}
	}
	return true
}

// String returns the MIL spelling of t, in the printer's canonical form.
func (t Type) String() string {
	var b strings.Builder
	t.write(&b)
	return b.String()
}

func (t Type) write(b *strings.Builder) {
	switch t.Kind {
	case ScalarKind:
		b.WriteString(t.DType.String())
	case TensorKind:
		b.WriteString("tensor<")
		b.WriteString(t.DType.String())
		b.WriteString(", [")
		for i, d := range t.Shape {
			if i > 0 {
				b.WriteString(", ")
			}
			if d == -1 {
				b.WriteString("?") // unknown, as in Apple's flexible-shape functions
			} else {
				b.WriteString(strconv.Itoa(d))
			}
		}
		b.WriteString("]>")
	case TupleKind, DictKind:
		if t.Kind == TupleKind {
			b.WriteString("tuple<")
		} else {
			b.WriteString("dict<")
		}
		for i, e := range t.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			e.write(b)
		}
		b.WriteString(">")
	case ListKind:
		b.WriteString("list<")
		if len(t.Elems) > 0 {
			t.Elems[0].write(b)
		}
		b.WriteString(", ")
		if t.Len < 0 {
			b.WriteString("?")
		} else {
			b.WriteString(strconv.Itoa(t.Len))
		}
		b.WriteString(">")
	}
}
