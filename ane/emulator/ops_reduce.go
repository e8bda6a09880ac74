package emulator

import (
	"math"
	"slices"

	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/internal/fastexp"
	"github.com/anestar/anestar/internal/vec"
	"github.com/anestar/anestar/mil"
)

// normAxes normalises possibly negative axes against rank, rejecting duplicates and out-of-range values.
func normAxes(op *mil.Op, arg string, axes []int, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make([]bool, rank)
	for i, a := range axes {
		if a < 0 {
			a += rank
		}
		if a < 0 || a >= rank {
			return nil, opErr(op, "argument %s: axis %d out of range for rank %d", arg, axes[i], rank)
		}
		if seen[a] {
			return nil, opErr(op, "argument %s: axis %d repeated", arg, axes[i])
		}
		seen[a] = true
		out[i] = a
	}
	return out, nil
}

// axesArg reads op's argument axes, all of x's axes when absent, normalised against x's rank.
func (c *compiler) axesArg(op *mil.Op, x *tensor) ([]int, error) {
	axes, ok, err := c.intsArg(op, "axes")
	if err != nil {
		return nil, err
	}
	if !ok {
		axes = make([]int, len(x.shape))
		for i := range axes {
			axes[i] = i
		}
	}
	return normAxes(op, "axes", axes, len(x.shape))
}

// axisArg reads op's argument axis (def when absent), normalised against x's rank, which must not be 0.
func (c *compiler) axisArg(op *mil.Op, x *tensor, def int) (int, error) {
	ax, err := c.intArg(op, "axis", def)
	if err != nil {
		return 0, err
	}
	if len(x.shape) == 0 {
		return 0, opErr(op, "x is a scalar")
	}
	axes, err := normAxes(op, "axis", []int{ax}, len(x.shape))
	if err != nil {
		return 0, err
	}
	return axes[0], nil
}

// axisSplit returns the sizes before, inside and after the dims [a, b] of shape.
func axisSplit(shape []int, a, b int) (outer, n, inner int) {
	return numel(shape[:a]), numel(shape[a : b+1]), numel(shape[b+1:])
}

// consecutive reports whether sorted axes form one block.
func consecutive(axes []int) bool {
	for i := 1; i < len(axes); i++ {
		if axes[i] != axes[i-1]+1 {
			return false
		}
	}
	return len(axes) > 0
}

// blockWidth is the width of the column blocks that strided reductions walk at once.
const blockWidth = 256

// reduceOp builds reduce_sum, reduce_mean and reduce_max.
func reduceOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndResult(op)
	if err != nil {
		return step{}, err
	}
	axes, err := c.axesArg(op, x)
	if err != nil {
		return step{}, err
	}
	slices.Sort(axes)
	src := x.data
	var pre func() // a transposition that moves the reduced axes last, when they are not one block
	var outer, n, inner int
	switch {
	case len(axes) == 0:
		outer, n, inner = numel(x.shape), 1, 1
	case consecutive(axes):
		outer, n, inner = axisSplit(x.shape, axes[0], axes[len(axes)-1])
	default:
		var perm []int
		for i := range x.shape {
			if !slices.Contains(axes, i) {
				perm = append(perm, i)
			}
		}
		perm = append(perm, axes...)
		tmp := make([]float32, len(x.data))
		pre = newPermute(x.shape, perm, tmp, x.data).run
		src = tmp
		n = numel(x.shape) / max(1, numel(out.shape))
		outer, inner = numel(out.shape), 1
		if numel(x.shape) == 0 {
			outer, n = 0, 0
		}
	}
	if outer*inner != len(out.data) {
		return step{}, opErr(op, "result has shape %v, reducing %v over %v gives %d elements", out.shape, x.shape, axes, outer*inner)
	}
	kind := op.Kind
	isMax := kind == "reduce_max"
	od := out.data
	nb := (inner + blockWidth - 1) / blockWidth
	body := func(lo, hi int) {
		if inner == 1 { // each result a run of n values (a column's channels): the same sums, in order, without a row per value
			for o := lo; o < hi; o++ {
				od[o] = reduceRun(src[o*n:o*n+n], isMax)
				if kind == "reduce_mean" {
					od[o] *= 1 / float32(n)
				}
			}
			return
		}
		for blk := lo; blk < hi; blk++ {
			o, i0 := blk/nb, (blk%nb)*blockWidth
			i1 := min(i0+blockWidth, inner)
			acc := od[o*inner+i0 : o*inner+i1]
			base := o * n * inner
			if isMax {
				for i := range acc {
					acc[i] = float32(math.Inf(-1))
				}
			} else {
				clear(acc)
			}
			for j := 0; j < n; j++ {
				row := src[base+j*inner+i0 : base+j*inner+i1]
				if isMax {
					for i, v := range row {
						if v > acc[i] || v != v {
							acc[i] = v
						}
					}
				} else {
					for i, v := range row {
						acc[i] += v
					}
				}
			}
			if kind == "reduce_mean" {
				inv := 1 / float32(n)
				for i := range acc {
					acc[i] *= inv
				}
			}
		}
	}
	blocks := outer * nb
	return step{outs: []*tensor{out}, flops: float64(len(x.data)), run: func() error {
		if pre != nil {
			pre()
		}
		parallel(blocks, max(1, 1<<14/max(1, n*min(inner, blockWidth))), body)
		return nil
	}}, nil
}

// reduceRun is the reduction of v in order from +0 (a sum) or -inf (the maximum, NaN kept), as the
// blocked loop of reduceOp computes each of its results.
func reduceRun(v []float32, isMax bool) float32 {
	if isMax {
		m := float32(math.Inf(-1))
		for _, x := range v {
			if x > m || x != x {
				m = x
			}
		}
		return m
	}
	var s float32
	for _, x := range v {
		s += x
	}
	return s
}

// softmaxOp builds softmax along one axis: exp(x - max) / sum.
func softmaxOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndSameShape(op)
	if err != nil {
		return step{}, err
	}
	a, err := c.axisArg(op, x, -1)
	if err != nil {
		return step{}, err
	}
	outer, n, inner := axisSplit(x.shape, a, a)
	xd, od := x.data, out.data
	nb := (inner + blockWidth - 1) / blockWidth
	body := func(lo, hi int) {
		var mx, sum [blockWidth]float32
		for blk := lo; blk < hi; blk++ {
			o, i0 := blk/nb, (blk%nb)*blockWidth
			i1 := min(i0+blockWidth, inner)
			w := i1 - i0
			base := o * n * inner
			if inner == 1 && blk+4 <= hi {
				softmaxRows4(od[base:base+4*n], xd[base:base+4*n], n)
				blk += 3
				continue
			}
			if inner == 1 {
				row, dst := xd[base:base+n], od[base:base+n]
				softmaxRow(dst, row)
				continue
			}
			for i := 0; i < w; i++ {
				mx[i], sum[i] = float32(math.Inf(-1)), 0
			}
			for j := 0; j < n; j++ {
				for i, v := range xd[base+j*inner+i0 : base+j*inner+i1] {
					if v > mx[i] {
						mx[i] = v
					}
				}
			}
			for j := 0; j < n; j++ {
				dst := od[base+j*inner+i0 : base+j*inner+i1]
				for i, v := range xd[base+j*inner+i0 : base+j*inner+i1] {
					e := fastexp.Exp32(v - mx[i])
					dst[i] = e
					sum[i] += e
				}
			}
			for j := 0; j < n; j++ {
				dst := od[base+j*inner+i0 : base+j*inner+i1]
				for i := range dst {
					dst[i] /= sum[i]
				}
			}
		}
	}
	blocks := outer * nb
	return step{outs: []*tensor{out}, flops: 5 * float64(len(xd)), run: func() error {
		parallel(blocks, max(1, 1<<13/max(1, n*min(inner, blockWidth))), body)
		return nil
	}}, nil
}

// softmaxRow is the softmax of one contiguous row. Where some entries lie more than expZeroMargin
// below the row's maximum (a row masked by an input, such as the decoder's over its key/value cache:
// mostly -65504), expRow computes the others only.
func softmaxRow(dst, row []float32) {
	dst = dst[:len(row)]
	expRow(dst, row)
	normalize(dst)
}

// softmaxRows4 is softmaxRow of the four consecutive rows of n values in x, into dst (which may be x):
// the same bits, the four sums added side by side (addRows) where one row's sum waited on each
// addition in turn.
func softmaxRows4(dst, x []float32, n int) {
	d0, d1, d2, d3 := dst[:n], dst[n:2*n], dst[2*n:3*n], dst[3*n:4*n]
	expRow(d0, x[:n])
	expRow(d1, x[n:2*n])
	expRow(d2, x[2*n:3*n])
	expRow(d3, x[3*n:4*n])
	var sum [4]float32
	rows := [4][]float32{d0, d1, d2, d3}
	addRows(sum[:], rows[:])
	for i, d := range rows {
		scaleBy(d, 1/sum[i])
	}
}

// rowGroup is how many rows the fused steps gather for addRows.
const rowGroup = 8

// addRows adds the elements of each of rows to its sum, in order: one float32 addition after another
// from the sum's value, as normalize and reduce_sum add. Four rows at a time, their chains interleave
// over the four's common length, so the adds run at their throughput rather than their latency; the
// rest of each row, and the last rows short of four, go on alone.
func addRows(sum []float32, rows [][]float32) {
	sum = sum[:len(rows)]
	q := len(rows) &^ 3
	for k := 0; k < q; k += 4 {
		n := min(len(rows[k]), len(rows[k+1]), len(rows[k+2]), len(rows[k+3]))
		r0, r1, r2, r3 := rows[k][:n], rows[k+1][:n], rows[k+2][:n], rows[k+3][:n]
		s0, s1, s2, s3 := sum[k], sum[k+1], sum[k+2], sum[k+3]
		for j := range n {
			s0 += r0[j]
			s1 += r1[j]
			s2 += r2[j]
			s3 += r3[j]
		}
		sum[k], sum[k+1], sum[k+2], sum[k+3] = s0, s1, s2, s3
		for i := k; i < k+4; i++ {
			for _, e := range rows[i][n:] {
				sum[i] += e
			}
		}
	}
	for i := q; i < len(rows); i++ {
		for _, e := range rows[i] {
			sum[i] += e
		}
	}
}

// normalize scales dst by the reciprocal of its sum, added in order from +0.
func normalize(dst []float32) {
	var s float32
	for _, e := range dst {
		s += e
	}
	scaleBy(dst, 1/s)
}

// expRow sets dst to exp(row - m), m the row's maximum (NaN ignored; vec.Max, whose zero's sign does
// not matter: v - 0 and v + 0 are v but for a zero v, whose exponential is 1 either way). It computes the exponentials of
// the runs of entries not more than expZeroMargin below m only (a row masked by an input, such as the
// decoder's over its key/value cache, is mostly -65504): exp32 is exactly +0 for the others, which are
// written as +0; an unmasked row is one run. A sum of the result in order is then the sum of the runs' in
// order (s + 0 = s; s starts at +0 and the terms are not negative, so it is never -0), and the caller's
// scaling reaches the zeros too, so that a NaN or infinite reciprocal does.
func expRow(dst, row []float32) {
	m := vec.Max(row)
	for i := 0; i < len(row); {
		if row[i]-m < -expZeroMargin {
			dst[i] = 0
			i++
			continue
		}
		j := i + 1
		for j < len(row) && !(row[j]-m < -expZeroMargin) {
			j++
		}
		fastexp.Shifted(dst[i:j], row[i:j], m, false)
		i = j
	}
}

// scaleBy multiplies dst by s in place, eight lanes at a time where the vector code runs (the same
// IEEE products as the scalar loop).
func scaleBy(dst []float32, s float32) {
	for i := vec.VS(vec.Mul, dst, dst, s); i < len(dst); i++ {
		dst[i] *= s
	}
}

// layerNormOp builds layer_norm over a block of consecutive axes.
func layerNormOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndSameShape(op)
	if err != nil {
		return step{}, err
	}
	axes, err := c.axesArg(op, x)
	if err != nil {
		return step{}, err
	}
	if !consecutive(axes) || !slices.IsSorted(axes) {
		return step{}, opErr(op, "argument axes: %v: the emulator normalises over consecutive increasing axes only", axes)
	}
	outer, n, inner := axisSplit(x.shape, axes[0], axes[len(axes)-1])
	gamma, err := c.optTensorArg(op, "gamma")
	if err != nil {
		return step{}, err
	}
	beta, err := c.optTensorArg(op, "beta")
	if err != nil {
		return step{}, err
	}
	for _, t := range []*tensor{gamma, beta} {
		if t != nil && len(t.data) != n {
			return step{}, opErr(op, "%s has %d elements, the normalised axes hold %d", t.name, len(t.data), n)
		}
	}
	epsV, err := c.floatArg(op, "epsilon", 1e-5)
	if err != nil {
		return step{}, err
	}
	eps := float64(float32(epsV))
	if isFloat16(x.dtype) {
		eps = float64(half.RoundF16(float32(epsV)))
	}
	xd, od := x.data, out.data
	// Statistics in float64 per (outer, inner) column; the result is rounded once.
	body := func(lo, hi int) {
		for col := lo; col < hi; col++ {
			o, i := col/inner, col%inner
			base := o*n*inner + i
			var s float64
			for j := 0; j < n; j++ {
				s += float64(xd[base+j*inner])
			}
			mean := s / float64(n)
			var v float64
			for j := 0; j < n; j++ {
				d := float64(xd[base+j*inner]) - mean
				v += d * d
			}
			rstd := 1 / math.Sqrt(v/float64(n)+eps)
			for j := 0; j < n; j++ {
				y := (float64(xd[base+j*inner]) - mean) * rstd
				if gamma != nil {
					y *= float64(gamma.data[j])
				}
				if beta != nil {
					y += float64(beta.data[j])
				}
				od[base+j*inner] = float32(y)
			}
		}
	}
	cols := outer * inner
	return step{outs: []*tensor{out}, flops: 8 * float64(len(xd)), run: func() error {
		parallel(cols, max(1, 1<<13/max(1, n)), body)
		return nil
	}}, nil
}
