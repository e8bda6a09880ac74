package mil

import (
	"fmt"
	"slices"
)

// Ops that move data without arithmetic: reshape, transpose, slices, concat, split, cast, expand_dims,
// squeeze. Arguments that decide the result shape (shape, perm, begin, size, ...) must be constants, so
// that every shape is static.

var castTypes = []DType{FP16, FP32, Int32, Bool, Int8, UInt8, Int16, UInt16}

func init() {
	register(&OpDef{
		Name: "reshape",
		Doc:  "x with a new shape of the same number of elements",
		Args: []ArgDef{argX(dataTypes),
			constInts("shape", true, "new dims; one may be -1 (inferred); 0 copies x's dim when len(shape) == rank(x)")},
		infer: inferReshape,
	})
	register(&OpDef{
		Name:  "transpose",
		Doc:   "x with its dims permuted: result dim i is x's dim perm[i]",
		Args:  []ArgDef{argX(dataTypes), constInts("perm", true, "a permutation of x's axes")},
		infer: inferTranspose,
	})
	register(&OpDef{
		Name: "slice_by_size",
		Doc:  "the block of x starting at begin with extent size",
		Args: []ArgDef{argX(dataTypes),
			constInts("begin", true, "start per dim; negative counts from the end"),
			constInts("size", true, "extent per dim; -1 means to the end")},
		infer: inferSliceBySize,
	})
	register(&OpDef{
		Name: "slice_by_index",
		Doc:  "numpy-style x[begin:end:stride] per dim, with masks",
		Args: []ArgDef{argX(dataTypes),
			constInts("begin", true, "start per dim; negative counts from the end"),
			constInts("end", true, "end per dim (exclusive); negative counts from the end"),
			constInts("stride", false, "step per dim, not 0; default 1"),
			constBools("begin_mask", "true ignores begin (start at the first element in stride order)"),
			constBools("end_mask", "true ignores end (run to the last element in stride order)"),
			constBools("squeeze_mask", "true takes the single index begin and drops the dim")},
		infer: inferSliceByIndex,
	})
	register(&OpDef{
		Name: "concat",
		Doc:  "values joined along axis (interleave: alternating slices of equal shapes)",
		Args: []ArgDef{
			{Name: "values", Required: true, Tuple: true, DTypes: dataTypes, Doc: "tensors of one dtype and rank"},
			constInt("axis", true, "the axis to join along; negative counts from the end"),
			constBool("interleave", "take one slice of each value in turn; default false"),
		},
		infer: inferConcat,
	})
	register(&OpDef{
		Name: "split",
		Doc:  "x cut along axis into several results",
		Args: []ArgDef{argX(dataTypes),
			constInt("num_splits", false, "number of equal parts (the dim must divide evenly)"),
			constInts("split_sizes", false, "sizes of the parts, summing to the dim"),
			constInt("axis", true, "the axis to cut")},
		infer: inferSplit,
	})
	register(&OpDef{
		Name: "cast",
		Doc:  "x converted to dtype",
		Args: []ArgDef{argX(castTypes),
			constString("dtype", true, `"fp16", "fp32", "int32", "bool", "int8", "uint8", "int16" or "uint16"`)},
		infer: inferCast,
	})
	register(&OpDef{
		Name:  "expand_dims",
		Doc:   "x with size-1 dims inserted at axes (positions in the result)",
		Args:  []ArgDef{argX(dataTypes), constInts("axes", true, "positions of the new dims in the result")},
		infer: inferExpandDims,
	})
	register(&OpDef{
		Name:  "squeeze",
		Doc:   "x without the size-1 dims at axes (default: every size-1 dim)",
		Args:  []ArgDef{argX(dataTypes), constInts("axes", false, "dims to drop, each of size 1")},
		infer: inferSqueeze,
	})
}

// ReshapeShape resolves a reshape target against x's shape: 0 copies x's dim at the same position (only
// when len(shape) == len(x), as coremltools has it), one -1 takes the remaining size.
func ReshapeShape(x, shape []int) ([]int, error) {
	out := slices.Clone(shape)
	infer := -1
	known := 1
	for i, d := range out {
		switch {
		case d == 0:
			if len(shape) != len(x) {
				return nil, fmt.Errorf("shape %v: 0 copies a dim of x only when the ranks match (x has shape %v)", shape, x)
			}
			out[i] = x[i]
		case d == -1:
			if infer >= 0 {
				return nil, fmt.Errorf("shape %v has more than one -1", shape)
			}
			infer = i
			continue
		case d < -1:
			return nil, fmt.Errorf("shape %v has a negative dim %d", shape, d)
		}
		known *= out[i]
		if _, ok := shapeElements([]int{known}); !ok {
			return nil, fmt.Errorf("shape %v is too large", shape)
		}
	}
	n, _ := shapeElements(x)
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			return nil, fmt.Errorf("shape %v: cannot infer -1 for %d elements (shape %v)", shape, n, x)
		}
		out[infer] = n / known
		known = n
	}
	if known != n {
		return nil, fmt.Errorf("shape %v has %d elements, x has %d (shape %v)", shape, known, n, x)
	}
	return out, nil
}

func inferReshape(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	shape, err := a.ints("shape")
	if err != nil {
		return nil, err
	}
	out, err := ReshapeShape(x.Shape, shape)
	if err != nil {
		return nil, err
	}
	return one(tensorType(x.DType, out))
}

func inferTranspose(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	perm, err := a.ints("perm")
	if err != nil {
		return nil, err
	}
	if len(perm) != x.Rank() {
		return nil, fmt.Errorf("argument \"perm\" has %d values, x has rank %d", len(perm), x.Rank())
	}
	p, err := normAxes("perm", perm, x.Rank())
	if err != nil {
		return nil, err
	}
	out := make([]int, len(p))
	for i, ax := range p {
		out[i] = x.Shape[ax]
	}
	return one(tensorType(x.DType, out))
}

// SliceBySizeBounds resolves slice_by_size's begin and size against shape: negative begins count from
// the end and a size of -1 runs to the end. It returns the start and extent per dim.
func SliceBySizeBounds(shape, begin, size []int) (start, extent []int, err error) {
	if len(begin) != len(shape) || len(size) != len(shape) {
		return nil, nil, fmt.Errorf("begin has %d values and size %d, x has rank %d", len(begin), len(size), len(shape))
	}
	start, extent = make([]int, len(shape)), make([]int, len(shape))
	for i, d := range shape {
		b := begin[i]
		if b < 0 {
			b += d
		}
		if b < 0 || b >= d {
			return nil, nil, fmt.Errorf("dim %d: begin %d is outside [0, %d)", i, begin[i], d)
		}
		s := size[i]
		if s == -1 {
			s = d - b
		}
		if s < 1 || s > d-b {
			return nil, nil, fmt.Errorf("dim %d: size %d from begin %d runs past the dim of %d", i, size[i], b, d)
		}
		start[i], extent[i] = b, s
	}
	return start, extent, nil
}

func inferSliceBySize(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	begin, err := a.ints("begin")
	if err != nil {
		return nil, err
	}
	size, err := a.ints("size")
	if err != nil {
		return nil, err
	}
	_, ext, err := SliceBySizeBounds(x.Shape, begin, size)
	if err != nil {
		return nil, err
	}
	return one(tensorType(x.DType, ext))
}

// SliceByIndexBounds resolves slice_by_index with Python's slice rules: per dim the result takes count
// elements at start, start+stride, ...; a squeezed dim takes the one element at begin and is dropped from
// the result shape. stride and the masks may be nil (all 1, all false).
func SliceByIndexBounds(shape, begin, end, stride []int, beginMask, endMask, squeezeMask []bool) (start, strides, count []int, err error) {
	r := len(shape)
	if len(begin) != r || len(end) != r {
		return nil, nil, nil, fmt.Errorf("begin has %d values and end %d, x has rank %d", len(begin), len(end), r)
	}
	for _, m := range []struct {
		name string
		n    int
	}{{"stride", len(stride)}, {"begin_mask", len(beginMask)}, {"end_mask", len(endMask)}, {"squeeze_mask", len(squeezeMask)}} {
		if m.n != 0 && m.n != r {
			return nil, nil, nil, fmt.Errorf("%s has %d values, x has rank %d", m.name, m.n, r)
		}
	}
	start, strides, count = make([]int, r), make([]int, r), make([]int, r)
	for i, d := range shape {
		s := 1
		if stride != nil {
			s = stride[i]
		}
		if s == 0 {
			return nil, nil, nil, fmt.Errorf("dim %d: stride 0", i)
		}
		strides[i] = s
		if squeezeMask != nil && squeezeMask[i] {
			b := begin[i]
			if b < 0 {
				b += d
			}
			if b < 0 || b >= d {
				return nil, nil, nil, fmt.Errorf("dim %d: squeezed index %d is outside [0, %d)", i, begin[i], d)
			}
			start[i], count[i] = b, 1
			continue
		}
		lo, hi := 0, d // clamp range for stride > 0
		if s < 0 {
			lo, hi = -1, d-1
		}
		clamp := func(v int) int {
			if v < 0 {
				v += d
			}
			return min(max(v, lo), hi)
		}
		b, e := clamp(begin[i]), clamp(end[i])
		if beginMask != nil && beginMask[i] {
			b = hi
			if s > 0 {
				b = lo
			}
		}
		if endMask != nil && endMask[i] {
			e = lo
			if s > 0 {
				e = hi
			}
		}
		n := 0
		if s > 0 && e > b {
			n = (e - b + s - 1) / s
		} else if s < 0 && b > e {
			n = (b - e - s - 1) / -s
		}
		if n == 0 {
			return nil, nil, nil, fmt.Errorf("dim %d: slice [%d:%d:%d] of a dim of %d is empty", i, begin[i], end[i], s, d)
		}
		start[i], count[i] = b, n
	}
	return start, strides, count, nil
}

func inferSliceByIndex(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	r := x.Rank()
	var ints [3][]int
	for i, name := range []string{"begin", "end", "stride"} {
		v, err := a.ints(name)
		if err != nil {
			return nil, err
		}
		ints[i] = v
	}
	var masks [3][]bool
	for i, name := range []string{"begin_mask", "end_mask", "squeeze_mask"} {
		if !a.has(name) {
			continue
		}
		m, err := a.bools(name, r)
		if err != nil {
			return nil, err
		}
		masks[i] = m
	}
	_, _, count, err := SliceByIndexBounds(x.Shape, ints[0], ints[1], ints[2], masks[0], masks[1], masks[2])
	if err != nil {
		return nil, err
	}
	var out []int
	for i, n := range count {
		if masks[2] == nil || !masks[2][i] {
			out = append(out, n)
		}
	}
	return one(tensorType(x.DType, out))
}

func inferConcat(a *opArgs) ([]Type, error) {
	vals := a.vals["values"]
	first := vals[0].Type
	r := first.Rank()
	if r == 0 {
		return nil, fmt.Errorf("argument \"values\": member 0 is a scalar, want rank at least 1")
	}
	ax, err := a.intOr("axis", 0)
	if err != nil {
		return nil, err
	}
	if ax, err = normAxis("axis", ax, r); err != nil {
		return nil, err
	}
	inter, err := a.boolOr("interleave", false)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(first.Shape)
	for i, v := range vals[1:] {
		t := v.Type
		switch {
		case t.DType != first.DType:
			return nil, fmt.Errorf("argument \"values\": member %d has dtype %s, member 0 has %s", i+1, t.DType, first.DType)
		case t.Rank() != r:
			return nil, fmt.Errorf("argument \"values\": member %d has rank %d, member 0 has %d", i+1, t.Rank(), r)
		}
		for d := range r {
			if d != ax && t.Shape[d] != first.Shape[d] {
				return nil, fmt.Errorf("argument \"values\": member %d has shape %v, member 0 has %v (only dim %d may differ)", i+1, t.Shape, first.Shape, ax)
			}
		}
		if inter && t.Shape[ax] != first.Shape[ax] {
			return nil, fmt.Errorf("argument \"values\": interleave needs equal shapes, member %d has %v, member 0 has %v", i+1, t.Shape, first.Shape)
		}
		out[ax] += t.Shape[ax]
	}
	return one(Tensor(first.DType, out...))
}

// inferSplit: coremltools reads num_splits as equal parts; a dim that does not divide evenly is an error
// here rather than a ragged last part. Given both, num_splits must equal len(split_sizes).
func inferSplit(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	if x.Rank() == 0 {
		return nil, fmt.Errorf("x is a scalar")
	}
	ax, err := a.intOr("axis", 0)
	if err != nil {
		return nil, err
	}
	if ax, err = normAxis("axis", ax, x.Rank()); err != nil {
		return nil, err
	}
	d := x.Shape[ax]
	sizes, err := a.ints("split_sizes")
	if err != nil {
		return nil, err
	}
	n, err := a.intOr("num_splits", 0)
	if err != nil {
		return nil, err
	}
	switch {
	case sizes == nil && !a.has("num_splits"):
		return nil, fmt.Errorf("needs num_splits or split_sizes")
	case sizes != nil && a.has("num_splits") && n != len(sizes):
		return nil, fmt.Errorf("num_splits is %d, split_sizes has %d values", n, len(sizes))
	case sizes == nil:
		if n < 1 || d%n != 0 {
			return nil, fmt.Errorf("num_splits %d does not divide dim %d of size %d", n, ax, d)
		}
		sizes = make([]int, n)
		for i := range sizes {
			sizes[i] = d / n
		}
	}
	sum := 0
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("split_sizes %v has a size below 1", sizes)
		}
		sum += s
	}
	if sum != d {
		return nil, fmt.Errorf("split_sizes %v sum to %d, dim %d has size %d", sizes, sum, ax, d)
	}
	out := make([]Type, len(sizes))
	for i, s := range sizes {
		shape := slices.Clone(x.Shape)
		shape[ax] = s
		out[i] = Tensor(x.DType, shape...)
	}
	return out, nil
}

func inferCast(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	name, err := a.strOr("dtype", "")
	if err != nil {
		return nil, err
	}
	dt, ok := ParseDType(name)
	if !ok || !slices.Contains(castTypes, dt) {
		return nil, fmt.Errorf("argument \"dtype\": cannot cast to %q", name)
	}
	return one(tensorType(dt, x.Shape))
}

func inferExpandDims(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	axes, err := a.ints("axes")
	if err != nil {
		return nil, err
	}
	r := x.Rank() + len(axes)
	norm, err := normAxes("axes", axes, r)
	if err != nil {
		return nil, err
	}
	out := make([]int, r)
	for _, ax := range norm {
		out[ax] = 1
	}
	j := 0
	for i := range out {
		if out[i] == 0 {
			out[i] = x.Shape[j]
			j++
		}
	}
	return one(Tensor(x.DType, out...))
}

// inferSqueeze: squeezing every dim gives a scalar, as coremltools' type inference has it.
func inferSqueeze(a *opArgs) ([]Type, error) {
	x := a.typ("x")
	drop := make([]bool, x.Rank())
	if a.has("axes") {
		axes, err := a.ints("axes")
		if err != nil {
			return nil, err
		}
		norm, err := normAxes("axes", axes, x.Rank())
		if err != nil {
			return nil, err
		}
		for _, ax := range norm {
			if x.Shape[ax] != 1 {
				return nil, fmt.Errorf("argument \"axes\": dim %d of x has size %d, not 1", ax, x.Shape[ax])
			}
			drop[ax] = true
		}
	} else {
		for i, d := range x.Shape {
			drop[i] = d == 1
		}
	}
	var out []int
	for i, d := range x.Shape {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return one(tensorType(x.DType, out))
}
