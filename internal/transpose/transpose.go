// Package transpose moves matrices into their transposes, tile by tile (16x16 blocks in AVX-512 registers
// where the CPU has them): the host math (cpu), the surfaces' transposed writes (ane) and the
// emulator's gathers share it, and it loads no library.
package transpose

import "fmt"

// transposeTile is the side of the square tiles Transpose moves, in 4x4 blocks. Measured on the
// [2048, 768], [768, 2048] and [768, 768] matrices of the reference layer (best of 6 interleaved runs
// on a shared 2-core Xeon): tiles of 8 took 1.19, 1.25 and 1.06 ms, of 16 4.07, 1.49 and 1.47 ms, and
// the element-by-element loop over tiles of 32 that this replaces 1.67, 4.20 and 2.10 ms.
const transposeTile = 8

// Transpose writes the transpose of the r x c matrix src into the c x r matrix dst: dst[j*ldd+i] =
// src[i*lds+j] for i < r, j < c. lds and ldd are the row strides (leading dimensions) of src and dst,
// at least c and r, so that a band of columns or a strided view transposes in place: the columns
// [lo, hi) of a row-major r x n matrix m are Transpose(dst, r, m[lo:], n, r, hi-lo). The matrices are
// moved tile by tile, each tile in 4x4 blocks: four source rows are read four values at a time and four
// destination rows written four values at a time, so both stay in the cache. It returns an error, and
// writes nothing, when a size is negative, a stride too small or a slice too short.
func Transpose(dst []float32, ldd int, src []float32, lds int, r, c int) error {
	switch {
	case r < 0 || c < 0:
		return fmt.Errorf("transpose.Transpose: %d x %d matrix", r, c)
	case r == 0 || c == 0:
		return nil
	case lds < c || ldd < r:
		return fmt.Errorf("transpose.Transpose: strides %d (src) and %d (dst) for a %d x %d matrix and its transpose", lds, ldd, r, c)
	case len(src) < (r-1)*lds+c || len(dst) < (c-1)*ldd+r:
		return fmt.Errorf("transpose.Transpose: %d x %d matrix with strides %d and %d needs %d and %d values, have %d and %d",
			r, c, lds, ldd, (r-1)*lds+c, (c-1)*ldd+r, len(src), len(dst))
	}
	r16, c16 := 0, 0 // the part moved in 16x16 blocks in vector registers, where the CPU can
	if HasBlock16() {
		r16, c16 = r/16*16, c/16*16
		for j0 := 0; j0 < c16; j0 += 16 {
			for i0 := 0; i0 < r16; i0 += 16 {
				Block16(&dst[j0*ldd+i0], ldd, &src[i0*lds+j0], lds)
			}
		}
	}
	// The rest in tiles: the columns right of the blocks, then the rows below them.
	tiles := func(i0, i1, j0, j1 int) {
		for j := j0; j < j1; j += transposeTile {
			for i := i0; i < i1; i += transposeTile {
				transposeTileAt(dst, ldd, src, lds, i, min(i+transposeTile, i1), j, min(j+transposeTile, j1))
			}
		}
	}
	tiles(0, r16, c16, c)
	tiles(r16, r, 0, c)
	return nil
}

// transposeTileAt moves source rows [i0, i1) and columns [j0, j1) of the tile.
func transposeTileAt(dst []float32, ldd int, src []float32, lds int, i0, i1, j0, j1 int) {
	i := i0
	for ; i+4 <= i1; i += 4 {
		s0 := src[i*lds : i*lds+j1]
		s1 := src[(i+1)*lds : (i+1)*lds+j1]
		s2 := src[(i+2)*lds : (i+2)*lds+j1]
		s3 := src[(i+3)*lds : (i+3)*lds+j1]
		j := j0
		for ; j+4 <= j1; j += 4 {
			a, b, e, f := s0[j:j+4:j+4], s1[j:j+4:j+4], s2[j:j+4:j+4], s3[j:j+4:j+4]
			k := j*ldd + i
			d0 := dst[k : k+4 : k+4]
			d1 := dst[k+ldd : k+ldd+4 : k+ldd+4]
			d2 := dst[k+2*ldd : k+2*ldd+4 : k+2*ldd+4]
			d3 := dst[k+3*ldd : k+3*ldd+4 : k+3*ldd+4]
			d0[0], d0[1], d0[2], d0[3] = a[0], b[0], e[0], f[0]
			d1[0], d1[1], d1[2], d1[3] = a[1], b[1], e[1], f[1]
			d2[0], d2[1], d2[2], d2[3] = a[2], b[2], e[2], f[2]
			d3[0], d3[1], d3[2], d3[3] = a[3], b[3], e[3], f[3]
		}
		for ; j < j1; j++ {
			k := j*ldd + i
			d := dst[k : k+4 : k+4]
			d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
		}
	}
	for ; i < i1; i++ {
		for j := j0; j < j1; j++ {
			dst[j*ldd+i] = src[i*lds+j]
		}
	}
}
