package emulator

import (
	"math"

	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// aliasOp builds reshape, expand_dims and squeeze: the result shares x's buffer.
func aliasOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndView(op)
	if err != nil {
		return step{}, err
	}
	if numel(out.shape) != numel(x.shape) {
		return step{}, opErr(op, "result %v holds %d elements, x %v holds %d", out.shape, numel(out.shape), x.shape, numel(x.shape))
	}
	out.data, out.lay = x.data, x.lay
	out.konst = x.konst
	return step{outs: []*tensor{out}, exact: true}, nil
}

// viewStep makes out the strided view (dims of out, str, off) of x: an alias when the view is one
// contiguous run of x or a view read in place (inplace.go), else a gather into
// out's own buffer. The step's gather describes the view either way.
func viewStep(c *compiler, out, x *tensor, str []int, off int) step {
	g := newGather(out.shape, str, off, nil, x.data)
	if g.n == 0 {
		out.data = x.data[:0]
		return step{outs: []*tensor{out}, exact: true, gather: g}
	}
	if g.contiguous() {
		out.data = x.data[off : off+g.n]
		return step{outs: []*tensor{out}, exact: true, gather: g}
	}
	if data, lay := c.inPlace(out, g, x.data); lay != nil {
		out.data, out.lay = data, lay
		return step{outs: []*tensor{out}, exact: true, gather: g}
	}
	out.data = c.plan.alloc(out.name, g.n)
	g.dst = out.data
	return step{outs: []*tensor{out}, exact: true, gather: g, run: func() error { g.run(); return nil }}
}

// transposeOp builds transpose.
func transposeOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndView(op)
	if err != nil {
		return step{}, err
	}
	perm, _, err := c.intsArg(op, "perm")
	if err != nil {
		return step{}, err
	}
	if perm, err = normAxes(op, "perm", perm, len(x.shape)); err != nil {
		return step{}, err
	}
	if len(perm) != len(x.shape) {
		return step{}, opErr(op, "argument perm has %d axes, x has rank %d", len(perm), len(x.shape))
	}
	st := stridesOf(x.shape)
	str := make([]int, len(perm))
	want := make([]int, len(perm))
	for i, p := range perm {
		str[i], want[i] = st[p], x.shape[p]
	}
	if err := checkShape(op, "result", out.shape, want); err != nil {
		return step{}, err
	}
	return viewStep(c, out, x, str, 0), nil
}

// sliceOp builds slice_by_size and slice_by_index.
func sliceOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndView(op)
	if err != nil {
		return step{}, err
	}
	begin, _, err := c.intsArg(op, "begin")
	if err != nil {
		return step{}, err
	}
	var start, step1, count []int
	if op.Kind == "slice_by_size" {
		size, _, err := c.intsArg(op, "size")
		if err != nil {
			return step{}, err
		}
		start, count, err = mil.SliceBySizeBounds(x.shape, begin, size)
		if err != nil {
			return step{}, opErr(op, "%v", err)
		}
		step1 = make([]int, len(start))
		for i := range step1 {
			step1[i] = 1
		}
	} else {
		end, _, err := c.intsArg(op, "end")
		if err != nil {
			return step{}, err
		}
		stride, _, err := c.intsArg(op, "stride")
		if err != nil {
			return step{}, err
		}
		var masks [3][]bool
		for i, name := range []string{"begin_mask", "end_mask", "squeeze_mask"} {
			if masks[i], err = c.boolsArg(op, name); err != nil {
				return step{}, err
			}
		}
		start, step1, count, err = mil.SliceByIndexBounds(x.shape, begin, end, stride, masks[0], masks[1], masks[2])
		if err != nil {
			return step{}, opErr(op, "%v", err)
		}
	}
	if numel(count) != numel(out.shape) {
		return step{}, opErr(op, "result has shape %v, the slice has extent %v", out.shape, count)
	}
	st := stridesOf(x.shape)
	str := make([]int, len(count))
	off := 0
	for i := range count {
		str[i] = st[i] * step1[i]
		off += start[i] * st[i]
	}
	// The view is walked over count (squeezed dims have extent 1 and do not change the order).
	view := &tensor{name: out.name, shape: count}
	s := viewStep(c, view, x, str, off)
	out.data, out.lay = view.data, view.lay
	s.outs = []*tensor{out}
	c.recordInView(x, s.gather, s.run != nil)
	return s, nil
}

// concatOp builds concat, plain or interleaved.
func concatOp(c *compiler, op *mil.Op) (step, error) {
	vals, err := c.tupleArg(op, "values")
	if err != nil {
		return step{}, err
	}
	out, err := c.result(op, 0)
	if err != nil {
		return step{}, err
	}
	if len(vals) == 0 {
		return step{}, opErr(op, "argument values is empty")
	}
	ax, err := c.intArg(op, "axis", 0)
	if err != nil {
		return step{}, err
	}
	inter, err := c.boolArg(op, "interleave", false)
	if err != nil {
		return step{}, err
	}
	r := len(out.shape)
	axes, err := normAxes(op, "axis", []int{ax}, r)
	if err != nil {
		return step{}, err
	}
	a := axes[0]
	outer, _, inner := axisSplit(out.shape, a, a)
	total := 0
	blocks := make([]int, len(vals)) // elements each value adds per outer index
	for i, v := range vals {
		if len(v.shape) != r {
			return step{}, opErr(op, "value %d has rank %d, the result has %d", i, len(v.shape), r)
		}
		for k := range v.shape {
			if k != a && v.shape[k] != out.shape[k] {
				return step{}, opErr(op, "value %d has shape %v, the result %v", i, v.shape, out.shape)
			}
		}
		if inter && !sameShape(v.shape, vals[0].shape) {
			return step{}, opErr(op, "interleave needs equal shapes: value %d has %v, value 0 %v", i, v.shape, vals[0].shape)
		}
		total += v.shape[a]
		blocks[i] = v.shape[a] * inner
	}
	if total != out.shape[a] {
		return step{}, opErr(op, "values add up to %d along axis %d, the result has %d", total, a, out.shape[a])
	}
	if !inter && outer == 1 {
		c.concatParts[out] = vals
	}
	od := out.data
	srcs := make([][]float32, len(vals))
	placed := 0 // parts computed in their place (concat_target.go): nothing to copy
	for i, v := range vals {
		srcs[i] = v.data
		if !inter && outer == 1 && inPlaceAt(v.data, od, blocks, i) {
			srcs[i], placed = nil, placed+1
		}
	}
	if placed == len(vals) {
		return step{outs: []*tensor{out}, exact: true}, nil
	}
	row := out.shape[a] * inner
	var body func(lo, hi int)
	if !inter {
		body = func(lo, hi int) {
			for o := lo; o < hi; o++ {
				d := od[o*row:]
				for i, s := range srcs {
					b := blocks[i]
					if s != nil {
						copy(d[:b], s[o*b:(o+1)*b])
					}
					d = d[b:]
				}
			}
		}
	} else {
		k := vals[0].shape[a]
		body = func(lo, hi int) {
			for o := lo; o < hi; o++ {
				d := od[o*row:]
				for j := 0; j < k; j++ {
					for _, s := range srcs {
						copy(d[:inner], s[(o*k+j)*inner:(o*k+j+1)*inner])
						d = d[inner:]
					}
				}
			}
		}
	}
	st := step{outs: []*tensor{out}, exact: true, run: func() error {
		parallel(outer, max(1, 1<<15/max(row, 1)), body)
		return nil
	}}
	// Any range of the outer index is a piece (chain.go) when the values are dense.
	pw := &piecewise{n: outer, fn: body, out: access{od[:outer*row], row}}
	for i, v := range vals {
		if v.lay != nil || len(v.data) < outer*blocks[i] {
			pw = nil
			break
		}
		pw.ins = append(pw.ins, access{v.data[:outer*blocks[i]], blocks[i]})
	}
	if outer > 1 && row > 0 {
		st.pw = pw
	}
	return st, nil
}

// inPlaceAt reports whether part i of a concat of one outer block lies where the concat puts it in
// od: at the sum of the earlier blocks.
func inPlaceAt(part, od []float32, blocks []int, i int) bool {
	off := 0
	for _, b := range blocks[:i] {
		off += b
	}
	return len(part) > 0 && off < len(od) && len(part) >= blocks[i] && &part[0] == &od[off]
}

// splitOp builds split: each result is a view of x along axis.
func splitOp(c *compiler, op *mil.Op) (step, error) {
	x, err := c.tensorArg(op, "x")
	if err != nil {
		return step{}, err
	}
	a, err := c.axisArg(op, x, 0)
	if err != nil {
		return step{}, err
	}
	st := stridesOf(x.shape)
	var all []*tensor
	var runs []func() error
	pos := 0
	for i := range op.Results {
		out, err := c.resultNoBuf(op, i)
		if err != nil {
			return step{}, err
		}
		if len(out.shape) != len(x.shape) {
			return step{}, opErr(op, "result %d has rank %d, x has %d", i, len(out.shape), len(x.shape))
		}
		for k := range out.shape {
			if k != a && out.shape[k] != x.shape[k] {
				return step{}, opErr(op, "result %d has shape %v, x has %v", i, out.shape, x.shape)
			}
		}
		if pos+out.shape[a] > x.shape[a] {
			return step{}, opErr(op, "results take more than x's %d along axis %d", x.shape[a], a)
		}
		s := viewStep(c, out, x, st, pos*st[a])
		pos += out.shape[a]
		all = append(all, out)
		if s.run != nil {
			runs = append(runs, s.run)
		}
	}
	if pos != x.shape[a] {
		return step{}, opErr(op, "results take %d of x's %d along axis %d", pos, x.shape[a], a)
	}
	s := step{outs: all, exact: true}
	if len(runs) > 0 {
		s.run = func() error {
			for _, r := range runs {
				r()
			}
			return nil
		}
	}
	return s, nil
}

// readers is the number of operand references to the value name, outputs counting one each.
func (c *compiler) readers(name string) int {
	n := readCounts(c.fn)[name]
	for _, r := range c.fn.Outputs {
		if r.Name == name {
			n++
		}
	}
	return n
}

// castOp builds cast. Conversion to fp16 is the step's fp16 rounding (none in FP32 mode); integer types
// truncate toward zero; bool is x != 0. A cast to a float dtype that changes no value (fp16 to fp32,
// any float cast in FP32 mode, fp16 to fp16) shares x's buffer, as a reshape does: float32 already
// holds every value exactly. One that rounds to fp16 rounds as it copies, in one pass, or, when it is
// the only reader of a function input, as the input's transfer reads the surface.
func castOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndView(op)
	if err != nil {
		return step{}, err
	}
	if numel(out.shape) != len(x.data) {
		return step{}, opErr(op, "result %v holds %d elements, x %v holds %d", out.shape, numel(out.shape), x.shape, len(x.data))
	}
	if out.dtype.IsFloat() && (!c.rounds(out) || isFloat16(x.dtype)) {
		out.data, out.konst = x.data, x.konst
		return step{outs: []*tensor{out}, exact: true}, nil
	}
	if out.dtype.IsFloat() && c.inputs[x] && !c.opts.CheckNumerics && c.readers(x.name) == 1 {
		// The input's transfer rounds it as it reads it (newInputTransfer): the same values, one pass.
		x.roundIn = true
		out.data = x.data
		return step{outs: []*tensor{out}, exact: true}, nil
	}
	out.data = c.plan.alloc(out.name, len(x.data))
	xd, od := x.data, out.data
	var f func(lo, hi int)
	fused := false
	switch {
	case out.dtype.IsFloat() && c.rounds(out):
		f, fused = func(lo, hi int) { half.RoundF16To(od[lo:hi], xd[lo:hi]) }, true // what copy, then rounding, give
	case out.dtype.IsFloat():
		f = func(lo, hi int) { copy(od[lo:hi], xd[lo:hi]) }
	case out.dtype == mil.Bool:
		f = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				od[i] = 0
				if xd[i] != 0 {
					od[i] = 1
				}
			}
		}
	default:
		f = func(lo, hi int) {
			for i := lo; i < hi; i++ {
				od[i] = float32(math.Trunc(float64(xd[i])))
			}
		}
	}
	return step{outs: []*tensor{out}, fused: fused, run: func() error { parallel(len(od), 1<<15, f); return nil }}, nil
}
