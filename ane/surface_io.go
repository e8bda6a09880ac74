package ane

import (
	"encoding/binary"
	"fmt"
	"github.com/anestar/anestar/internal/transpose"
	"unsafe"

	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/mil"
)

// checkChannels reports an error unless [from, from+n) lies within the surface's channels.
func (s *Surface) checkChannels(what string, from, n int) error {
	if from < 0 || n < 0 || from+n > s.channels {
		return fmt.Errorf("surface %q: %s channels [%d, %d) out of range [0, %d)", s.name, what, from, from+n, s.channels)
	}
	return nil
}

// checkRegion reports an error unless channels [ch, ch+nch) x columns [col, col+ncol) lie within the surface.
func (s *Surface) checkRegion(what string, ch, nch, col, ncol int) error {
	if err := s.checkChannels(what, ch, nch); err != nil {
		return err
	}
	if col < 0 || ncol < 0 || col+ncol > s.spatial {
		return fmt.Errorf("surface %q: %s columns [%d, %d) out of range [0, %d)", s.name, what, col, col+ncol, s.spatial)
	}
	return nil
}

// access runs f on the surface's bytes between Lock and Unlock of its memory.
func (s *Surface) access(readOnly bool, f func(b []byte)) error {
	if err := s.mem.Lock(readOnly); err != nil {
		return fmt.Errorf("surface %q: lock: %w", s.name, err)
	}
	b := s.mem.Bytes()
	if len(b) != s.memBytes() {
		s.mem.Unlock(readOnly)
		return fmt.Errorf("surface %q: memory holds %d bytes, want %d", s.name, len(b), s.memBytes())
	}
	f(b)
	if err := s.mem.Unlock(readOnly); err != nil {
		return fmt.Errorf("surface %q: unlock: %w", s.name, err)
	}
	return nil
}

// The conversions below allocate nothing (cpu's EncodeF16To and DecodeF16To): surface accesses happen
// inside Eval, which must not allocate. The methods a script calls between evals (WriteChannels,
// ReadChannels, WriteRegion, ReadRegion, CopyRegion) spread large transfers over package par's
// helpers instead: run on the script's goroutine alone they kept one core busy while the other waited.

// ioGrain is the number of elements from which a script's transfer is split, and the size of a piece.
const ioGrain = 1 << 15

// split calls fn over [0, n) in pieces of grain elements, on par's helpers when there are two or more.
func split(n, grain int, fn func(lo, hi int)) {
	if n < 2*grain {
		fn(0, n)
		return
	}
	par.For(n, grain, fn)
}

// encode stores src as consecutive elements of dtype d in dst.
func encode(d mil.DType, dst []byte, src []float32) {
	if d == mil.FP16 {
		half.EncodeF16To(dst[:2*len(src)], src)
		return
	}
	half.EncodeF32To(dst, src)
}

// floats is b as the float32 values it holds when the surface's dtype d is fp32, the host
// little-endian and b 4-byte aligned (as surface memory is); nil otherwise.
func floats(d mil.DType, b []byte) []float32 {
	if d != mil.FP32 || len(b) < 4 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

// decode loads consecutive elements of dtype d from src into dst.
func decode(d mil.DType, dst []float32, src []byte) {
	if d == mil.FP16 {
		half.DecodeF16To(dst, src[:2*len(dst)])
		return
	}
	half.DecodeF32To(dst, src)
}

// WriteChannels stores src, converted to the surface's dtype (fp16 rounds half to even), in channels
// [from, from+n). len(src) must be exactly n*Spatial().
func (s *Surface) WriteChannels(from, n int, src []float32) error {
	if err := s.checkChannels("write", from, n); err != nil {
		return err
	}
	if len(src) != n*s.spatial {
		return fmt.Errorf("surface %q: write of %d channels x %d needs %d values, got %d", s.name, n, s.spatial, n*s.spatial, len(src))
	}
	if s.flat > 0 {
		return s.writeLinear(from*s.spatial, src)
	}
	if !s.contiguous() {
		return s.WriteRegion(from, n, 0, s.spatial, src, false)
	}
	es := s.ElemSize()
	return s.access(false, func(b []byte) {
		b = b[s.off(from, 0)*es : s.off(from+n, 0)*es]
		split(len(src), ioGrain, func(lo, hi int) { encode(s.typ.DType, b[lo*es:hi*es], src[lo:hi]) })
	})
}

// ReadChannels loads channels [from, from+n) into dst as float32. len(dst) must be exactly n*Spatial().
func (s *Surface) ReadChannels(from, n int, dst []float32) error {
	if err := s.checkChannels("read", from, n); err != nil {
		return err
	}
	if len(dst) != n*s.spatial {
		return fmt.Errorf("surface %q: read of %d channels x %d needs room for %d values, got %d", s.name, n, s.spatial, n*s.spatial, len(dst))
	}
	if s.flat > 0 {
		return s.readLinear(from*s.spatial, dst)
	}
	if !s.contiguous() {
		return s.ReadRegion(from, n, 0, s.spatial, dst)
	}
	es := s.ElemSize()
	return s.access(true, func(b []byte) {
		b = b[s.off(from, 0)*es : s.off(from+n, 0)*es]
		split(len(dst), ioGrain, func(lo, hi int) { decode(s.typ.DType, dst[lo:hi], b[lo*es:hi*es]) })
	})
}

// WriteRegion stores src in channels [ch, ch+nch) x spatial columns [col, col+ncol). src holds nch rows of
// ncol values (src[c*ncol+j] goes to channel ch+c, column col+j); when transposed, src holds ncol rows of
// nch values instead (src[j*nch+c] goes to channel ch+c, column col+j). This is how weight matrices are
// packed along the spatial axis next to the activations of a dynamic-weight kernel.
func (s *Surface) WriteRegion(ch, nch, col, ncol int, src []float32, transposed bool) error {
	if err := s.checkRegion("write", ch, nch, col, ncol); err != nil {
		return err
	}
	if len(src) != nch*ncol {
		return fmt.Errorf("surface %q: write of region %dx%d needs %d values, got %d", s.name, nch, ncol, nch*ncol, len(src))
	}
	if ncol == 1 { // a column (a token's, in generation): its values converted together, placed by offset
		return s.access(false, func(b []byte) { s.columnWrite(b, ch, nch, col, src) })
	}
	if s.flat > 0 {
		return s.flatWriteRegion(ch, nch, col, ncol, src, transposed)
	}
	es := s.ElemSize()
	return s.access(false, func(b []byte) {
		if f := floats(s.typ.DType, b); transposed && f != nil {
			// fp32 in place: the channels [lo, hi) are the transpose of src's columns [lo, hi).
			split(nch, max(1, ioGrain/max(ncol, 1)), func(lo, hi int) {
				// The region lies in the surface and src holds it (checked above): no error.
				transpose.Transpose(f[s.off(ch+lo, col):], s.pitch, src[lo:], nch, ncol, hi-lo)
			})
			return
		}
		split(nch, max(1, ioGrain/max(ncol, 1)), func(lo, hi int) {
			if transposed {
				s.encodeTransposed(b, ch, col, src, nch, ncol, lo, hi)
				return
			}
			for c := lo; c < hi; c++ {
				off := s.off(ch+c, col) * es
				encode(s.typ.DType, b[off:off+ncol*es], src[c*ncol:(c+1)*ncol])
			}
		})
	})
}

// Tiles of encodeTransposed: tileCh channels by tileCols columns of a region, moved by one tiled
// transpose into a buffer and encoded row by row. Gathered a value at a time, each read was nch floats
// from the last: staging the language model's weights into its fp16 inputs took twice as long as
// into fp32 ones, which move by the same tiled transpose in place.
const tileCh, tileCols = 16, 256

// encodeTransposed writes channels [lo, hi) of the region at (ch, col) from src, its transpose (ncol
// rows of nch values), converted to the surface's dtype.
func (s *Surface) encodeTransposed(b []byte, ch, col int, src []float32, nch, ncol, lo, hi int) {
	es := s.ElemSize()
	var buf [tileCh * tileCols]float32
	for c0 := lo; c0 < hi; c0 += tileCh {
		nc := min(tileCh, hi-c0)
		for j0 := 0; j0 < ncol; j0 += tileCols {
			m := min(tileCols, ncol-j0)
			// buf[c*m+j] = src[(j0+j)*nch+c0+c]: within src and buf (the region was checked).
			transpose.Transpose(buf[:], m, src[j0*nch+c0:], nch, m, nc)
			for c := range nc {
				off := s.off(ch+c0+c, col+j0) * es
				encode(s.typ.DType, b[off:off+m*es], buf[c*m:(c+1)*m])
			}
		}
	}
}

// ReadRegion loads channels [ch, ch+nch) x spatial columns [col, col+ncol) into dst, nch rows of ncol values.
func (s *Surface) ReadRegion(ch, nch, col, ncol int, dst []float32) error {
	if err := s.checkRegion("read", ch, nch, col, ncol); err != nil {
		return err
	}
	if len(dst) != nch*ncol {
		return fmt.Errorf("surface %q: read of region %dx%d needs room for %d values, got %d", s.name, nch, ncol, nch*ncol, len(dst))
	}
	if ncol == 1 {
		return s.access(true, func(b []byte) { s.columnRead(b, ch, nch, col, dst) })
	}
	if s.flat > 0 {
		return s.flatReadRegion(ch, nch, col, ncol, dst)
	}
	es := s.ElemSize()
	return s.access(true, func(b []byte) {
		split(nch, max(1, ioGrain/max(ncol, 1)), func(lo, hi int) {
			for c := lo; c < hi; c++ {
				off := s.off(ch+c, col) * es
				decode(s.typ.DType, dst[c*ncol:(c+1)*ncol], b[off:off+ncol*es])
			}
		})
	})
}

// CopyChannels copies n channels of src starting at channel from into this surface starting at channel to.
// Both surfaces must have the same Spatial(). Same dtype copies bytes; otherwise values are converted
// (fp32 to fp16 rounds half to even). src may be s itself; overlapping ranges copy as if through a buffer.
func (s *Surface) CopyChannels(to int, src *Surface, from, n int) error {
	if src.spatial != s.spatial {
		return fmt.Errorf("surface %q: copy from %q: %d values per channel, want %d", s.name, src.name, src.spatial, s.spatial)
	}
	return s.CopyRegion(to, 0, src, from, 0, n, s.spatial)
}

// CopyRegion copies the region channels [srcCh, srcCh+nch) x columns [srcCol, srcCol+ncol) of src into this
// surface at channel dstCh, column dstCol. Same dtype copies bytes; otherwise values are converted.
func (s *Surface) CopyRegion(dstCh, dstCol int, src *Surface, srcCh, srcCol, nch, ncol int) error {
	if err := s.checkRegion("copy destination", dstCh, nch, dstCol, ncol); err != nil {
		return err
	}
	if err := src.checkRegion("copy source", srcCh, nch, srcCol, ncol); err != nil {
		return err
	}
	if src == s {
		return s.access(false, func(b []byte) { copyRegion(s, b, dstCh, dstCol, s, b, srcCh, srcCol, nch, ncol) })
	}
	if src.mem == s.mem || s.flat > 0 || src.flat > 0 { // parts of one packed surface, or a flattened part
		return s.copyThrough(dstCh, dstCol, src, srcCh, srcCol, nch, ncol)
	}
	var inner error
	err := src.access(true, func(sb []byte) {
		inner = s.access(false, func(db []byte) { copyRegion(s, db, dstCh, dstCol, src, sb, srcCh, srcCol, nch, ncol) })
	})
	if inner != nil {
		return inner
	}
	return err
}

// CopyReshaped copies channels [srcCh, srcCh+nch) of src — nch*src.Spatial() values in order — into
// this surface's region of rows channels from dstCh by their count/rows columns from dstCol, filled row
// after row: a block of one kernel's output handed to another kernel's input at another width (the
// tensor reshaped on the way). Same dtype copies bytes; otherwise values are converted. src must be
// another surface.
func (s *Surface) CopyReshaped(dstCh, dstCol, rows int, src *Surface, srcCh, nch int) error {
	if src == s || src.mem == s.mem {
		return fmt.Errorf("surface %q: reshaped copy from %q, which shares its memory: copy through a tensor", s.name, src.name)
	}
	if err := src.checkChannels("reshaped copy source", srcCh, nch); err != nil {
		return err
	}
	n := nch * src.spatial
	if rows <= 0 || n%rows != 0 {
		return fmt.Errorf("surface %q: reshaped copy of %d values from %q into %d rows: want a row count that divides them", s.name, n, src.name, rows)
	}
	ncol := n / rows
	if err := s.checkRegion("reshaped copy destination", dstCh, rows, dstCol, ncol); err != nil {
		return err
	}
	if s.flat > 0 || src.flat > 0 { // through a buffer
		tmp := make([]float32, n)
		if err := src.ReadChannels(srcCh, nch, tmp); err != nil {
			return err
		}
		return s.WriteRegion(dstCh, rows, dstCol, ncol, tmp, false)
	}
	var inner error
	err := src.access(true, func(sb []byte) {
		inner = s.access(false, func(db []byte) {
			des, ses := s.ElemSize(), src.ElemSize()
			base := srcCh * src.spatial
			split(rows, max(1, ioGrain/max(ncol, 1)), func(lo, hi int) {
				var tmp [256]float32
				for r := lo; r < hi; r++ {
					// Row r takes the source's values [k, k + ncol) in order, which may span several of
					// its channels: one run per piece.
					do := s.off(dstCh+r, dstCol) * des
					for k, end := base+r*ncol, base+(r+1)*ncol; k < end; {
						c, j := k/src.spatial, k%src.spatial
						n := min(end-k, src.spatial-j)
						so := src.off(c, j) * ses
						if s.typ.DType == src.typ.DType {
							copy(db[do:do+n*des], sb[so:so+n*ses])
						} else {
							for j0 := 0; j0 < n; j0 += len(tmp) {
								m := min(len(tmp), n-j0)
								decode(src.typ.DType, tmp[:m], sb[so+j0*ses:so+(j0+m)*ses])
								encode(s.typ.DType, db[do+j0*des:do+(j0+m)*des], tmp[:m])
							}
						}
						k, do = k+n, do+n*des
					}
				}
			})
		})
	})
	if inner != nil {
		return inner
	}
	return err
}

// copyRegion does the work of CopyRegion on locked bytes.
func copyRegion(d *Surface, db []byte, dstCh, dstCol int, s *Surface, sb []byte, srcCh, srcCol, nch, ncol int) {
	if nch == 0 || ncol == 0 {
		return
	}
	des, ses := d.ElemSize(), s.ElemSize()
	rowOf := func(sf *Surface, es, ch, col int) int { return sf.off(ch, col) * es }
	if d.typ.DType == s.typ.DType {
		if &db[0] == &sb[0] && dstCh > srcCh {
			// Same buffer, destination after source: copy rows back to front.
			for c := nch - 1; c >= 0; c-- {
				do, so := rowOf(d, des, dstCh+c, dstCol), rowOf(s, ses, srcCh+c, srcCol)
				copy(db[do:do+ncol*des], sb[so:so+ncol*ses])
			}
			return
		}
		if &db[0] == &sb[0] { // same buffer, destination before source: front to back
			for c := 0; c < nch; c++ {
				do, so := rowOf(d, des, dstCh+c, dstCol), rowOf(s, ses, srcCh+c, srcCol)
				copy(db[do:do+ncol*des], sb[so:so+ncol*ses])
			}
			return
		}
		// Distinct buffers: rows in pieces of about ioGrain elements, spread over par's helpers.
		split(nch, max(1, ioGrain/ncol), func(lo, hi int) {
			for c := lo; c < hi; c++ {
				do, so := rowOf(d, des, dstCh+c, dstCol), rowOf(s, ses, srcCh+c, srcCol)
				copy(db[do:do+ncol*des], sb[so:so+ncol*ses])
			}
		})
		return
	}
	// Different dtypes are different surfaces: convert through a small stack buffer.
	var tmp [256]float32
	for c := 0; c < nch; c++ {
		do, so := rowOf(d, des, dstCh+c, dstCol), rowOf(s, ses, srcCh+c, srcCol)
		for j0 := 0; j0 < ncol; j0 += len(tmp) {
			m := min(len(tmp), ncol-j0)
			decode(s.typ.DType, tmp[:m], sb[so+j0*ses:so+(j0+m)*ses])
			encode(d.typ.DType, db[do+j0*des:do+(j0+m)*des], tmp[:m])
		}
	}
}

// WriteBytes copies src into the surface's bytes starting at byte offset off. A view has no bytes of its
// own: there it is an error.
func (s *Surface) WriteBytes(off int, src []byte) error {
	if s.parent != nil {
		return s.viewBytesErr()
	}
	if off < 0 || off+len(src) > s.Bytes() {
		return fmt.Errorf("surface %q: write of bytes [%d, %d) out of range [0, %d)", s.name, off, off+len(src), s.Bytes())
	}
	return s.access(false, func(b []byte) { copy(b[off:], src) })
}

// ReadBytes copies the surface's bytes starting at byte offset off into dst (not for a view).
func (s *Surface) ReadBytes(off int, dst []byte) error {
	if s.parent != nil {
		return s.viewBytesErr()
	}
	if off < 0 || off+len(dst) > s.Bytes() {
		return fmt.Errorf("surface %q: read of bytes [%d, %d) out of range [0, %d)", s.name, off, off+len(dst), s.Bytes())
	}
	return s.access(true, func(b []byte) { copy(dst, b[off:]) })
}

// Access calls f with the surface's whole byte buffer between Lock and Unlock of its memory. The slice is
// valid only during f; with readOnly, f must not write to it. An error from f is returned as is.
func (s *Surface) Access(readOnly bool, f func(b []byte) error) error {
	if s.parent != nil {
		return s.viewBytesErr()
	}
	var ferr error
	if err := s.access(readOnly, func(b []byte) { ferr = f(b) }); err != nil {
		return err
	}
	return ferr
}

// viewBytesErr is the error of a byte access to a view.
func (s *Surface) viewBytesErr() error {
	return fmt.Errorf("surface %q is a part of %q and has no bytes of its own: read and write it by channels, or use the packed surface", s.name, s.parent.name)
}

// Fill sets every element of the surface to v.
func (s *Surface) Fill(v float32) error {
	if !s.contiguous() {
		vals := make([]float32, s.spatial)
		for i := range vals {
			vals[i] = v
		}
		for c := range s.channels {
			if err := s.WriteRegion(c, 1, 0, s.spatial, vals, false); err != nil {
				return err
			}
		}
		return nil
	}
	var tmp [256]float32
	for i := range tmp {
		tmp[i] = v
	}
	es := s.ElemSize()
	n := s.channels * s.spatial
	return s.access(false, func(b []byte) {
		for i := 0; i < n; i += len(tmp) {
			m := min(len(tmp), n-i)
			encode(s.typ.DType, b[(s.base+i)*es:(s.base+i+m)*es], tmp[:m])
		}
	})
}
