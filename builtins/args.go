package builtins

import (
	"fmt"

	"go.starlark.net/starlark"
)

// number unpacks an int or a float argument as a float64.
type number float64

// Unpack accepts an int or a float.
func (n *number) Unpack(v starlark.Value) error {
	f, ok := starlark.AsFloat(v)
	if !ok {
		return fmt.Errorf("got %s, want number", v.Type())
	}
	*n = number(f)
	return nil
}

// shapeArg unpacks a shape given as a list or tuple of ints.
type shapeArg []int

// Unpack accepts an int, or a list or tuple of ints.
func (s *shapeArg) Unpack(v starlark.Value) error {
	if _, ok := v.(starlark.Int); ok {
		var n int
		if err := starlark.AsInt(v, &n); err != nil {
			return err
		}
		*s = []int{n}
		return nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok || (v.Type() != "list" && v.Type() != "tuple") {
		return fmt.Errorf("got %s, want a shape (an int, or a list or tuple of ints)", v.Type())
	}
	out := make([]int, seq.Len())
	for i := range out {
		if err := starlark.AsInt(seq.Index(i), &out[i]); err != nil {
			return fmt.Errorf("shape element %d: %w", i, err)
		}
	}
	*s = out
	return nil
}

// shapeFromArgs reads a shape given either as ints (zeros(2, 3)) or as one list or tuple (zeros((2, 3))).
func shapeFromArgs(fn string, args starlark.Tuple) ([]int, error) {
	if len(args) == 1 {
		if typ := args[0].Type(); typ == "list" || typ == "tuple" {
			var s shapeArg
			if err := s.Unpack(args[0]); err != nil {
				return nil, nameErr(fn, err)
			}
			return s, nil
		}
	}
	if len(args) == 0 {
		return nil, nameErrf(fn, "missing shape")
	}
	shape := make([]int, len(args))
	for i, a := range args {
		if err := starlark.AsInt(a, &shape[i]); err != nil {
			return nil, nameErrf(fn, "shape element %d: %w", i, err)
		}
	}
	return shape, nil
}

// stringDict converts a Starlark dict with string keys to a Go map, in the dict's order.
func dictItems(fn, what string, d *starlark.Dict) ([]string, []starlark.Value, error) {
	var keys []string
	var vals []starlark.Value
	for _, kv := range d.Items() {
		k, ok := starlark.AsString(kv[0])
		if !ok {
			return nil, nil, nameErrf(fn, "%s keys must be strings, got %s", what, kv[0].Type())
		}
		keys = append(keys, k)
		vals = append(vals, kv[1])
	}
	return keys, vals, nil
}

// tensorDict converts a dict of names to tensors that the caller reads, in the dict's order: each
// value must be a tensor that no pending async work is writing.
func tensorDict(fn, what string, d *starlark.Dict) ([]string, []*Tensor, error) {
	keys, vals, err := dictItems(fn, what, d)
	if err != nil {
		return nil, nil, err
	}
	out := make([]*Tensor, len(vals))
	for i, v := range vals {
		t, ok := v.(*Tensor)
		if !ok {
			return nil, nil, nameErrf(fn, "%s[%q]: got %s, want tensor", what, keys[i], v.Type())
		}
		if err := t.readable(fn); err != nil {
			return nil, nil, err
		}
		out[i] = t
	}
	return keys, out, nil
}

// tensorList converts a list or tuple of tensors.
func tensorList(fn, what string, v starlark.Value) ([]*Tensor, error) {
	seq, ok := v.(starlark.Indexable)
	if !ok || (v.Type() != "list" && v.Type() != "tuple") {
		return nil, nameErrf(fn, "%s: got %s, want a list of tensors", what, v.Type())
	}
	out := make([]*Tensor, seq.Len())
	for i := range out {
		t, ok := seq.Index(i).(*Tensor)
		if !ok {
			return nil, nameErrf(fn, "%s[%d]: got %s, want tensor", what, i, seq.Index(i).Type())
		}
		out[i] = t
	}
	return out, nil
}
