package emulator

import (
	"sort"

	"github.com/anestar/anestar/ane"
)

// Input windows. A packed input is read by slices alone: each takes a window (a part) of it. A slice
// that the compiler cannot read in place (inplace.go) gathers its window into a buffer of its own at
// each eval: the input's transfer decoded the window into the input's buffer and the gather copies it
// again. When every reader of an input is a slice, the transfer instead decodes each gathered window
// straight into its slice's buffer and the rest of the input (the windows read in place) into the
// input's buffer, and the gathers never run: one pass over those values, not two. The values are the
// surface's, decoded by the same conversion, so the bits do not change (input_views_test.go compares
// with the gathers).
//
// A gather's buffer is planned from its slice's place in the program on: it may hold another value
// before it. So a window is decoded early only when every step before its gather is one that runs
// nothing (an alias) or another such gather: the values of the program then start at these slices.

// inView is one slice of a function input: the view it takes and whether its step gathers it.
type inView struct {
	g        *gather // the view (its dims, strides and offset into the input); dst is the gather's buffer
	gathered bool    // its step copies the view (else it aliases or reads it in place)
}

// recordInView notes the view g of x, an input of the function, that a slice takes.
func (c *compiler) recordInView(x *tensor, g *gather, gathered bool) {
	if !c.inputs[x] {
		return
	}
	if c.inViews == nil {
		c.inViews = map[*tensor][]inView{}
	}
	c.inViews[x] = append(c.inViews[x], inView{g: g, gathered: gathered})
}

// span is one run of contiguous values of a view: n values from offset off of the input, to dst when
// they go to a gather's buffer.
type span struct {
	off, n int
	dst    []float32
}

// runs returns the view's runs, to the gather's buffer when to is set; ok is false when the view's
// values are not runs of contiguous values.
func (v inView) runs(to bool) (rs []span, ok bool) {
	g := v.g
	if g.n == 0 {
		return nil, true
	}
	r := len(g.dims)
	if g.str[r-1] != 1 {
		return nil, false
	}
	inner, rows := g.dims[r-1], numel(g.dims[:r-1])
	for row := range rows {
		sp := span{off: g.srcOffset(row, r-1), n: inner}
		if to {
			sp.dst = g.dst[row*inner : (row+1)*inner]
		}
		rs = append(rs, sp)
	}
	return rs, true
}

// inputWindows returns, per input of k, the pieces its transfer reads (nil: the whole input into its
// buffer, as usual; always for an input read in place), and the gathers those pieces replace.
func (c *compiler) inputWindows(k *Kernel, steps []step) ([][]ioPiece, map[*gather]bool) {
	if c.noFuse || c.opts.CheckNumerics {
		return nil, nil
	}
	ins := k.inT
	// The inputs read by slices alone, and their gathers.
	mine := map[*gather]bool{}
	for i, t := range ins {
		vs := c.inViews[t]
		if c.aliased[i] || t.roundIn || len(vs) == 0 || len(vs) != c.readers(t.name) {
			continue
		}
		for _, v := range vs {
			if v.gathered {
				mine[v.g] = true
			}
		}
	}
	// Those that may run at the start: before each, only aliases and such gathers.
	early := map[*gather]bool{}
	for _, s := range steps {
		if s.gather != nil && mine[s.gather] {
			early[s.gather] = true
			continue
		}
		if s.run != nil {
			break
		}
	}
	if len(early) == 0 {
		return nil, nil
	}
	segs, dropped := make([][]ioPiece, len(ins)), map[*gather]bool{}
	for i, t := range ins {
		if segs[i] = c.windowPieces(t, k.ins[i].ElemSize(), early); segs[i] != nil {
			for _, v := range c.inViews[t] {
				if early[v.g] {
					dropped[v.g] = true
				}
			}
		}
	}
	return segs, dropped
}

// windowPieces returns the pieces of input t's transfer (es bytes a value): the windows of the gathers
// in early straight into their buffers, the rest of what its slices read into its own buffer. It
// returns nil when t has no such gather, or a view that is not runs of contiguous values.
func (c *compiler) windowPieces(t *tensor, es int, early map[*gather]bool) []ioPiece {
	var into, kept []span
	for _, v := range c.inViews[t] {
		rs, ok := v.runs(early[v.g])
		if !ok {
			return nil
		}
		if early[v.g] {
			into = append(into, rs...)
		} else {
			kept = append(kept, rs...)
		}
	}
	if len(into) == 0 {
		return nil
	}
	var segs []ioPiece
	for _, r := range mergeRuns(kept) {
		segs = append(segs, ioPiece{data: t.data[r.off : r.off+r.n], off: r.off * es})
	}
	for _, r := range into {
		segs = append(segs, ioPiece{data: r.dst, off: r.off * es})
	}
	return segs
}

// mergeRuns returns runs merged where they overlap or touch, so that no value is decoded twice.
func mergeRuns(rs []span) []span {
	sort.Slice(rs, func(i, j int) bool { return rs[i].off < rs[j].off })
	var out []span
	for _, r := range rs {
		if n := len(out); n > 0 && r.off <= out[n-1].off+out[n-1].n {
			out[n-1].n = max(out[n-1].n, r.off+r.n-out[n-1].off)
			continue
		}
		out = append(out, span{off: r.off, n: r.n})
	}
	return out
}

// inputTransfer returns the transfer of surface s into input i's values: its windows (inSegs) where
// it has them, else the whole input into its tensor.
func (k *Kernel) inputTransfer(i int, s *ane.Surface) *transfer {
	if i < len(k.inSegs) && k.inSegs[i] != nil {
		return newTransfer(s, k.inSegs[i], true)
	}
	return newInputTransfer(s, k.inT[i])
}
