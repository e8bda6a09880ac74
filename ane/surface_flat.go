package ane

import (
	"fmt"

	"github.com/anestar/anestar/mil"
)

// Flattened views. A part with more channels than its packed surface has (the FFN's [2*hidden, N]
// beside [dim, ...] parts) is laid out flattened: its values in row-major order fill a block of the
// packed surface's rows row after row, w columns each, as reshape reads them inside the program. Its
// view keeps the part's own [C, S] shape; its methods go through the element runs of that layout,
// slower than a window's rows but touching only the block.

// NewFlatView returns the view of a [1, C, H, W] part called name laid out flattened in rows
// [channel, channel + rows) x columns [column, column + width) of parent, rows*width = C*H*W.
func NewFlatView(parent *Surface, name string, shape []int, channel, column, rows, width int) (*Surface, error) {
	if parent.parent != nil {
		return nil, fmt.Errorf("surface %q: a view of a view", name)
	}
	t := mil.Tensor(parent.typ.DType, shape...)
	v := &Surface{name: name, typ: t, mem: parent.mem, pitch: parent.pitch, parent: parent, flat: width}
	v.channels, v.spatial = channelSplit(shape)
	if width <= 0 || rows*width != v.channels*v.spatial || channel < 0 || column < 0 || channel+rows > parent.channels || column+width > parent.spatial {
		return nil, fmt.Errorf("surface %q: %d values flattened into [%d, %d) x [%d, %d) of %q (%d x %d): does not fit", name,
			v.channels*v.spatial, channel, channel+rows, column, column+width, parent.name, parent.channels, parent.spatial)
	}
	v.base = parent.off(channel, column)
	return v, nil
}

// runs calls fn for each run of consecutive memory elements holding the surface's elements [k, k+n)
// in row-major order: mem the run's element offset in memory, i its first element's index in [0, n),
// m its length.
func (s *Surface) runs(k, n int, fn func(mem, i, m int)) {
	row := s.rowLen()
	for i := 0; i < n; {
		r, c := (k+i)/row, (k+i)%row
		m := min(n-i, row-c)
		fn(s.base+r*s.pitch+c, i, m)
		i += m
	}
}

// rowLen is the number of the surface's elements in one memory row: a channel's, or a flattened
// view's block width.
func (s *Surface) rowLen() int {
	if s.flat > 0 {
		return s.flat
	}
	return s.spatial
}

// at is the memory element offset of the surface's element k (row-major), as runs gives it.
func (s *Surface) at(k int) int {
	row := s.rowLen()
	return s.base + k/row*s.pitch + k%row
}

// columnChunk is how many values of a one-column region columnWrite and columnRead convert at once.
const columnChunk = 256

// writeLinear stores src at the surface's elements [k, k+len(src)) in row-major order.
func (s *Surface) writeLinear(k int, src []float32) error {
	es := s.ElemSize()
	return s.access(false, func(b []byte) {
		s.runs(k, len(src), func(mem, i, m int) { encode(s.typ.DType, b[mem*es:(mem+m)*es], src[i:i+m]) })
	})
}

// readLinear loads the surface's elements [k, k+len(dst)) in row-major order into dst.
func (s *Surface) readLinear(k int, dst []float32) error {
	es := s.ElemSize()
	return s.access(true, func(b []byte) {
		s.runs(k, len(dst), func(mem, i, m int) { decode(s.typ.DType, dst[i:i+m], b[mem*es:(mem+m)*es]) })
	})
}

// flatWriteRegion is WriteRegion on a flattened view: a linear write per channel of the region, under
// one access (a column of a packed surface is a channel's worth of one-element runs: an access for each
// cost more than the writes).
func (s *Surface) flatWriteRegion(ch, nch, col, ncol int, src []float32, transposed bool) error {
	row := src
	if transposed {
		row = make([]float32, ncol)
	}
	es := s.ElemSize()
	return s.access(false, func(b []byte) {
		for c := range nch {
			if transposed {
				for j := range ncol {
					row[j] = src[j*nch+c]
				}
			} else {
				row = src[c*ncol : (c+1)*ncol]
			}
			s.runs((ch+c)*s.spatial+col, ncol, func(mem, i, m int) { encode(s.typ.DType, b[mem*es:(mem+m)*es], row[i:i+m]) })
		}
	})
}

// columnWrite stores src[c] at channel ch+c, column col, for c < nch (in b, the surface's memory), in a
// window or a flattened view: converted a chunk at a time, then placed element by element, where a
// conversion call per element (or a run's closure call, flattened) cost more than the values.
func (s *Surface) columnWrite(b []byte, ch, nch, col int, src []float32) {
	es := s.ElemSize()
	var tmp [columnChunk * 4]byte
	w := s.column(ch, col)
	for c0 := 0; c0 < nch; c0 += columnChunk {
		n := min(columnChunk, nch-c0)
		encode(s.typ.DType, tmp[:n*es], src[c0:c0+n])
		for c := range n {
			m := w.next() * es
			for e := range es {
				b[m+e] = tmp[c*es+e]
			}
		}
	}
}

// columnWalk steps down a column of a surface (a window or a flattened view) channel by channel, its
// memory offsets by additions where at divides for each.
type columnWalk struct {
	s         *Surface
	row, r, q int // the memory rows' length, and the next element's row and place in it
}

// column returns the walk from channel ch, column col.
func (s *Surface) column(ch, col int) columnWalk {
	row := s.rowLen()
	k := ch*s.spatial + col
	return columnWalk{s: s, row: row, r: k / row, q: k % row}
}

// next returns the memory offset (in elements) of the walk's element and moves to the next channel's.
func (w *columnWalk) next() int {
	m := w.s.base + w.r*w.s.pitch + w.q
	w.q += w.s.spatial
	for w.q >= w.row {
		w.q -= w.row
		w.r++
	}
	return m
}

// columnRead is columnWrite's read: dst[c] = the element at channel ch+c, column col.
func (s *Surface) columnRead(b []byte, ch, nch, col int, dst []float32) {
	es := s.ElemSize()
	var tmp [columnChunk * 4]byte
	w := s.column(ch, col)
	for c0 := 0; c0 < nch; c0 += columnChunk {
		n := min(columnChunk, nch-c0)
		for c := range n {
			m := w.next() * es
			for e := range es {
				tmp[c*es+e] = b[m+e]
			}
		}
		decode(s.typ.DType, dst[c0:c0+n], tmp[:n*es])
	}
}

// flatReadRegion is ReadRegion on a flattened view, under one access as flatWriteRegion.
func (s *Surface) flatReadRegion(ch, nch, col, ncol int, dst []float32) error {
	es := s.ElemSize()
	return s.access(true, func(b []byte) {
		for c := range nch {
			d := dst[c*ncol : (c+1)*ncol]
			s.runs((ch+c)*s.spatial+col, ncol, func(mem, i, m int) { decode(s.typ.DType, d[i:i+m], b[mem*es:(mem+m)*es]) })
		}
	})
}

// copyThrough copies a region between surfaces of which one is a flattened view (or which share their
// memory): whole channels of distinct memories run by run, spread over par's helpers; other regions of
// distinct memories channel by channel under one access of each; a shared memory through a buffer.
func (s *Surface) copyThrough(dstCh, dstCol int, src *Surface, srcCh, srcCol, nch, ncol int) error {
	if src.mem != s.mem && dstCol == 0 && srcCol == 0 && ncol == s.spatial && ncol == src.spatial {
		return s.copyLinear(dstCh*s.spatial, src, srcCh*src.spatial, nch*ncol)
	}
	if src.mem != s.mem {
		return s.accessBoth(src, func(db, sb []byte) {
			var tmp [256]float32
			for c := range nch {
				s.copyRuns(db, (dstCh+c)*s.spatial+dstCol, src, sb, (srcCh+c)*src.spatial+srcCol, ncol, &tmp)
			}
		})
	}
	tmp := make([]float32, nch*ncol)
	if err := src.ReadRegion(srcCh, nch, srcCol, ncol, tmp); err != nil {
		return err
	}
	return s.WriteRegion(dstCh, nch, dstCol, ncol, tmp, false)
}

// copyLinear copies src's elements [sk, sk+n) into s's [dk, dk+n), both in row-major order, run by run
// (copyRuns), large copies spread over par's helpers. The memories differ.
func (s *Surface) copyLinear(dk int, src *Surface, sk, n int) error {
	return s.accessBoth(src, func(db, sb []byte) {
		split(n, ioGrain, func(lo, hi int) {
			var tmp [256]float32
			s.copyRuns(db, dk+lo, src, sb, sk+lo, hi-lo, &tmp)
		})
	})
}

// accessBoth runs f with s's memory writable and src's (another memory) readable.
func (s *Surface) accessBoth(src *Surface, f func(db, sb []byte)) error {
	var inner error
	err := src.access(true, func(sb []byte) {
		inner = s.access(false, func(db []byte) { f(db, sb) })
	})
	if inner != nil {
		return inner
	}
	return err
}

// copyRuns copies src's elements [sk, sk+n) (in sb) into s's [dk, dk+n) (in db), both in row-major
// order, run by run: bytes where the dtypes agree, converted through tmp where not.
func (s *Surface) copyRuns(db []byte, dk int, src *Surface, sb []byte, sk, n int, tmp *[256]float32) {
	des, ses := s.ElemSize(), src.ElemSize()
	if n == 1 && s.typ.DType == src.typ.DType { // an element (a column's, channel by channel): no runs
		dm, sm := s.at(dk), src.at(sk)
		copy(db[dm*des:(dm+1)*des], sb[sm*ses:(sm+1)*ses])
		return
	}
	s.runs(dk, n, func(dm, i, m int) {
		src.runs(sk+i, m, func(sm, _, k int) {
			if s.typ.DType == src.typ.DType {
				copy(db[dm*des:(dm+k)*des], sb[sm*ses:(sm+k)*ses])
			} else {
				for j := 0; j < k; j += len(tmp) {
					q := min(len(tmp), k-j)
					decode(src.typ.DType, tmp[:q], sb[(sm+j)*ses:(sm+j+q)*ses])
					encode(s.typ.DType, db[(dm+j)*des:(dm+j+q)*des], tmp[:q])
				}
			}
			dm += k
		})
	})
}
