package emulator

import "github.com/anestar/anestar/internal/transpose"

// gather copies a strided view of a source buffer into a dense destination: destination element
// (i0, i1, ...) of dims is source element off + i0*str[0] + i1*str[1] + .... Transposes, slices and splits
// are all gathers. Dims of size 1 are dropped and neighbours that the source walks contiguously are
// merged, so the common cases reduce to long contiguous copies or a batched 2-D transpose.
type gather struct {
	dims []int     // collapsed destination dims
	str  []int     // source stride per collapsed dim
	off  int       // source offset of the first element
	n    int       // elements
	dst  []float32 // destination buffer
	src  []float32 // source buffer
	rows int       // destination rows (all dims but the last)
	body func(lo, hi int)
}

// newGather prepares the copy of the view (dims, str, off) of src into dst.
func newGather(dims, str []int, off int, dst, src []float32) *gather {
	g := &gather{off: off, n: numel(dims), dst: dst, src: src}
	for k, d := range dims {
		if d == 1 {
			continue
		}
		if m := len(g.dims) - 1; m >= 0 && g.str[m] == str[k]*d {
			g.dims[m] *= d
			g.str[m] = str[k]
			continue
		}
		g.dims = append(g.dims, d)
		g.str = append(g.str, str[k])
	}
	if len(g.dims) == 0 {
		g.dims, g.str = []int{1}, []int{1}
	}
	r := len(g.dims)
	g.rows = numel(g.dims[:r-1])
	if g.n == 0 {
		g.rows = 0
	}
	inner, istr := g.dims[r-1], g.str[r-1]
	if r >= 2 && istr != 1 && g.str[r-2] == 1 {
		// Batched 2-D transpose: destination [B, R, C] from source [B, C, R] (in elements of str).
		rr, cc := g.dims[r-2], inner
		g.body = func(lo, hi int) { g.transpose2D(lo, hi, rr, cc, istr) }
		g.rows = numel(g.dims[:r-2])
		if g.n == 0 {
			g.rows = 0
		}
		return g
	}
	g.body = func(lo, hi int) {
		for row := lo; row < hi; row++ {
			s := g.srcOffset(row, r-1)
			d := g.dst[row*inner : (row+1)*inner]
			if istr == 1 {
				copy(d, g.src[s:s+inner])
				continue
			}
			for j := range d {
				d[j] = g.src[s+j*istr]
			}
		}
	}
	return g
}

// srcOffset is the source offset of destination row index row over the first k collapsed dims.
func (g *gather) srcOffset(row, k int) int {
	s := g.off
	for i := k - 1; i >= 0; i-- {
		s += (row % g.dims[i]) * g.str[i]
		row /= g.dims[i]
	}
	return s
}

// transpose2D handles batches [lo, hi) of a batched transpose: each is an rr x cc destination of the
// cc x rr source with row stride cstr.
func (g *gather) transpose2D(lo, hi, rr, cc, cstr int) {
	r := len(g.dims)
	for b := lo; b < hi; b++ {
		sb := g.srcOffset(b, r-2)
		// The view of a dense source has cstr >= rr and lies inside it: no error.
		transpose.Transpose(g.dst[b*rr*cc:(b+1)*rr*cc], cc, g.src[sb:], cstr, cc, rr)
	}
}

// offsets returns the source offset of every destination element, in order.
func (g *gather) offsets() []int {
	at := make([]int, 0, g.n)
	idx := make([]int, len(g.dims))
	for range g.n {
		s := g.off
		for k, i := range idx {
			s += i * g.str[k]
		}
		at = append(at, s)
		for k := len(idx) - 1; k >= 0; k-- {
			if idx[k]++; idx[k] < g.dims[k] {
				break
			}
			idx[k] = 0
		}
	}
	return at
}

// run does the copy.
func (g *gather) run() {
	if g.rows == 0 {
		return
	}
	per := g.n / g.rows
	parallel(g.rows, max(1, 1<<15/max(per, 1)), g.body)
}

// contiguous reports whether the view is one contiguous run of the source, so that it can alias it.
func (g *gather) contiguous() bool {
	return len(g.dims) == 1 && g.str[0] == 1
}

// permute returns the gather that transposes src of shape by perm into dst.
func newPermute(shape, perm []int, dst, src []float32) *gather {
	st := stridesOf(shape)
	dims := make([]int, len(perm))
	str := make([]int, len(perm))
	for i, p := range perm {
		dims[i], str[i] = shape[p], st[p]
	}
	return newGather(dims, str, 0, dst, src)
}
