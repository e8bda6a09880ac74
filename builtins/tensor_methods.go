package builtins

import (
	"fmt"
	"github.com/anestar/anestar/internal/floats"
	"github.com/anestar/anestar/internal/transpose"

	"go.starlark.net/starlark"
)

var tensorType = &typeDef{
	name: "tensor",
	doc: "A float32 array with a shape, row-major. A `[C, S]` tensor is channel-first like a surface: " +
		"channel c's S values are contiguous. `t[i]` is element i of a 1-D tensor or a view of row i; " +
		"`t[i] = x` sets it from a number or a tensor of the row's size; `len(t)` is the first dim; " +
		"iterating yields `t[i]`. `+ - * /` work between tensors of the same shape and between a tensor " +
		"and a number, giving a new tensor; the methods ending in `_` change the tensor in place and " +
		"return it, allocating nothing. Views (`rows`, `reshape`, `t[i]`) share storage with their tensor. " +
		"A tensor that pending async work writes cannot be read, and one it reads or writes cannot be " +
		"changed, until the queue's `wait()`: such an access is an error.",
	members: []fnDef{
		{sig: "shape", doc: "The dims as a tuple of ints."},
		{sig: "size", doc: "The number of elements."},
		{sig: "ndim", doc: "The number of dims."},
		{sig: "rows(start, stop)", doc: "A view of rows [start, stop) along the first axis: for a channel-first `[C, S]` tensor, a channel range.", fn: tRows},
		{sig: "reshape(*shape)", doc: "A view with another shape of the same size; one dim may be -1.", fn: tReshape},
		{sig: "transpose(out = None)", doc: "A new 2-D tensor, the transpose of this 2-D tensor; or written into out (of the transposed shape, not sharing storage), allocating nothing.", fn: tTranspose},
		{sig: "copy()", doc: "A new tensor with the same shape and values.", fn: tCopy},
		{sig: "list()", doc: "The elements as a flat list of floats, in row-major order.", fn: tList},
		{sig: "item()", doc: "The value of a one-element tensor as a float.", fn: tItem},
		{sig: "fill_(value)", doc: "Sets every element to value.", fn: tFill},
		{sig: "zero_()", doc: "Sets every element to 0.", fn: tZero},
		{sig: "copy_(src)", doc: "Copies src's elements into this tensor; the sizes must match (the shapes may differ).", fn: tCopyFrom},
		{sig: "add_(x)", doc: "Adds a number or a tensor of the same shape, in place.", fn: tInPlace(floats.Add)},
		{sig: "sub_(x)", doc: "Subtracts a number or a tensor of the same shape, in place.", fn: tInPlace(floats.Sub)},
		{sig: "mul_(x)", doc: "Multiplies by a number or a tensor of the same shape, in place.", fn: tInPlace(floats.Mul)},
		{sig: "div_(x)", doc: "Divides by a number or a tensor of the same shape, in place.", fn: tInPlace(floats.Div)},
		{sig: "axpy_(alpha, x)", doc: "Adds alpha * x (x of the same shape), in place: the gradient accumulation step.", fn: tAxpy},
		{sig: "sum()", doc: "The sum of the elements (accumulated in float64).", fn: tReduce(floats.Sum)},
		{sig: "mean()", doc: "The mean of the elements.", fn: tReduce(floats.Mean)},
		{sig: "max()", doc: "The largest element.", fn: tReduce(floats.Max)},
		{sig: "min()", doc: "The smallest element.", fn: tReduce(floats.Min)},
		{sig: "norm()", doc: "The L2 norm of the elements.", fn: tReduce(floats.Norm)},
		{sig: "dot(x)", doc: "The sum of elementwise products with x of the same shape.", fn: tDot},
	},
}

var tensorMethods = newMethodSet(tensorType)

// Attr returns a field or a bound method.
func (t *Tensor) Attr(name string) (starlark.Value, error) {
	switch name {
	case "shape":
		s := make(starlark.Tuple, len(t.shape))
		for i, d := range t.shape {
			s[i] = starlark.MakeInt(d)
		}
		return s, nil
	case "size":
		return starlark.MakeInt(len(t.data)), nil
	case "ndim":
		return starlark.MakeInt(len(t.shape)), nil
	}
	return tensorMethods.bind(t, name), nil
}

// AttrNames lists the fields and methods.
func (t *Tensor) AttrNames() []string { return tensorMethods.names }

func recvTensor(b *starlark.Builtin) *Tensor { return b.Receiver().(*Tensor) }

func tRows(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var start, stop int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "stop", &stop); err != nil {
		return nil, err
	}
	if start < 0 || stop > t.shape[0] || start >= stop {
		return nil, nameErrf(b.Name(), "rows [%d, %d) are not a non-empty range of %s's %d rows", start, stop, t, t.shape[0])
	}
	rs := t.rowSize()
	return t.view(t.data[start*rs:stop*rs:stop*rs], append([]int{stop - start}, t.shape[1:]...)), nil
}

func tReshape(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	if len(kwargs) > 0 {
		return nil, nameErrf(b.Name(), "unexpected keyword arguments")
	}
	shape, err := shapeFromArgs(b.Name(), args)
	if err != nil {
		return nil, err
	}
	shape, err = inferShape(shape, len(t.data))
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return t.view(t.data, shape), nil
}

// inferShape replaces a single -1 dim so that the shape holds n elements.
func inferShape(shape []int, n int) ([]int, error) {
	shape = append([]int(nil), shape...)
	free, prod := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && free < 0:
			free = i
		case d <= 0:
			return nil, fmt.Errorf("shape %s: dims must be positive (one may be -1)", shapeString(shape))
		default:
			prod *= d
		}
	}
	if free >= 0 {
		if n%prod != 0 {
			return nil, fmt.Errorf("shape %s does not divide %d elements", shapeString(shape), n)
		}
		shape[free] = n / prod
		prod = n
	}
	if prod != n {
		return nil, fmt.Errorf("shape %s holds %d elements, the tensor has %d", shapeString(shape), prod, n)
	}
	return shape, nil
}

func tTranspose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var out *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "out?", &out); err != nil {
		return nil, err
	}
	if len(t.shape) != 2 {
		return nil, nameErrf(b.Name(), "%s is not 2-D", t)
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	r, c := t.shape[0], t.shape[1]
	if out == nil {
		out, _ = NewTensor(c, r)
	} else {
		if len(out.shape) != 2 || out.shape[0] != c || out.shape[1] != r {
			return nil, fmt.Errorf("%s: out is %s, want [%d, %d]", b.Name(), out, c, r)
		}
		if out.st == t.st {
			return nil, fmt.Errorf("%s: out shares storage with the tensor", b.Name())
		}
		if err := out.writable(b.Name()); err != nil {
			return nil, err
		}
	}
	transpose.Transpose(out.data, r, t.data, c, r, c) // sizes match: no error
	return out, nil
}

func tCopy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	out, _ := NewTensor(t.shape...)
	copy(out.data, t.data)
	return out, nil
}

func tList(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	l := make([]starlark.Value, len(t.data))
	for i, x := range t.data {
		l[i] = starlark.Float(x)
	}
	return starlark.NewList(l), nil
}

func tItem(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if len(t.data) != 1 {
		return nil, nameErrf(b.Name(), "%s has %d elements, want 1", t, len(t.data))
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	return starlark.Float(t.data[0]), nil
}

func tFill(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var v number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &v); err != nil {
		return nil, err
	}
	if err := t.writable(b.Name()); err != nil {
		return nil, err
	}
	floats.Fill(t.data, float32(v))
	return t, nil
}

func tZero(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := t.writable(b.Name()); err != nil {
		return nil, err
	}
	clear(t.data)
	return t, nil
}

func tCopyFrom(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var src *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "src", &src); err != nil {
		return nil, err
	}
	if src.Size() != t.Size() {
		return nil, nameErrf(b.Name(), "src %s has %d elements, %s has %d", src, src.Size(), t, t.Size())
	}
	if err := src.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := t.writable(b.Name()); err != nil {
		return nil, err
	}
	copy(t.data, src.data)
	return t, nil
}

func tInPlace(k floats.Op) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		t := recvTensor(b)
		var x starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x); err != nil {
			return nil, err
		}
		if err := t.writable(b.Name()); err != nil {
			return nil, err
		}
		if f, ok := starlark.AsFloat(x); ok {
			floats.ApplyScalar(k, t.data, float32(f))
			return t, nil
		}
		u, ok := x.(*Tensor)
		if !ok {
			return nil, nameErrf(b.Name(), "for parameter x: got %s, want number or tensor", x.Type())
		}
		if err := sameShape(b.Name(), t, u); err != nil {
			return nil, err
		}
		if err := u.readable(b.Name()); err != nil {
			return nil, err
		}
		floats.Apply(k, t.data, u.data)
		return t, nil
	}
}

func tAxpy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var alpha number
	var x *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "alpha", &alpha, "x", &x); err != nil {
		return nil, err
	}
	if err := sameShape(b.Name(), t, x); err != nil {
		return nil, err
	}
	if err := x.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := t.writable(b.Name()); err != nil {
		return nil, err
	}
	floats.Axpy(float32(alpha), x.data, t.data)
	return t, nil
}

// tReduce is a method that returns f of the tensor's elements.
func tReduce(f func([]float32) float64) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		t := recvTensor(b)
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		if err := t.readable(b.Name()); err != nil {
			return nil, err
		}
		return starlark.Float(f(t.data)), nil
	}
}

func tDot(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := recvTensor(b)
	var x *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "x", &x); err != nil {
		return nil, err
	}
	if err := sameShape(b.Name(), t, x); err != nil {
		return nil, err
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := x.readable(b.Name()); err != nil {
		return nil, err
	}
	return starlark.Float(floats.Dot(t.data, x.data)), nil
}
