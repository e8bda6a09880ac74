package builtins

import (
	"fmt"

	"github.com/anestar/anestar/mil"
)

// Transposed weights. A backward kernel bakes in W^T for a weight W that the script keeps as [out, in];
// p.weight(..., transpose = True) has the builder encode W^T straight into the weight file, band by band
// of destination rows (mil.Builder.WeightFunc), the bands gathered on several goroutines, so that a
// script rebuilding its kernels after every update neither allocates nor pages in a transposed copy of
// each matrix.

// weightTransposed adds to bl the weight name holding the transpose (c x r) of the row-major r x c
// matrix src, with the given shape, which must hold r*c values. With zeros (a dry run) the data is left
// zero (mil.Builder.WeightZeros).
func weightTransposed(bl *mil.Builder, name string, dt mil.DType, shape []int, src []float32, r, c int, zeros bool) (*mil.Var, error) {
	n := 1
	for _, d := range shape {
		if d <= 0 {
			n = -1 // the builder reports the bad shape
			break
		}
		n *= d
	}
	if n >= 0 && n != r*c {
		return nil, fmt.Errorf("transpose: shape %v holds %d values, the transpose of [%d, %d] has %d", shape, n, r, c, r*c)
	}
	if zeros {
		return bl.WeightZeros(name, dt, shape, r*c), nil
	}
	// Chunks are bands of whole tiles of destination rows: values [lo, hi) are rows lo/r to hi/r.
	return bl.WeightFunc(name, dt, shape, weightTile*r, func(lo, hi int, dst []float32) {
		transposeCols(dst, src, r, c, lo/r, hi/r)
	}), nil
}

// weightTile is the side of the square tiles transposeCols moves, in 4x4 blocks. 16 measured fastest
// (by about a third over transpose2D's loop) on the [768, 2048], [2048, 768] and [768, 768] matrices
// of the reference layer.
const weightTile = 16

// transposeCols writes destination rows lo to hi (source columns [lo, hi)) of the transpose of the
// r x c matrix src into dst, which holds just those rows ((hi-lo)*r values), tile by tile, each tile
// in 4x4 blocks: four source rows are read four values at a time and four destination rows written
// four values at a time.
func transposeCols(dst, src []float32, r, c, lo, hi int) {
	dst = dst[:(hi-lo)*r] // dst[(j-lo)*r+i] is element [j, i] of the transpose
	for j0 := lo; j0 < hi; j0 += weightTile {
		j1 := min(j0+weightTile, hi)
		for i0 := 0; i0 < r; i0 += weightTile {
			i1 := min(i0+weightTile, r)
			i := i0
			for ; i+4 <= i1; i += 4 {
				s0, s1, s2, s3 := src[i*c:(i+1)*c], src[(i+1)*c:(i+2)*c], src[(i+2)*c:(i+3)*c], src[(i+3)*c:(i+4)*c]
				j := j0
				for ; j+4 <= j1; j += 4 {
					a, b, e, f := s0[j:j+4:j+4], s1[j:j+4:j+4], s2[j:j+4:j+4], s3[j:j+4:j+4]
					k := (j-lo)*r + i
					d0 := dst[k : k+4 : k+4]
					d1 := dst[k+r : k+r+4 : k+r+4]
					d2 := dst[k+2*r : k+2*r+4 : k+2*r+4]
					d3 := dst[k+3*r : k+3*r+4 : k+3*r+4]
					d0[0], d0[1], d0[2], d0[3] = a[0], b[0], e[0], f[0]
					d1[0], d1[1], d1[2], d1[3] = a[1], b[1], e[1], f[1]
					d2[0], d2[1], d2[2], d2[3] = a[2], b[2], e[2], f[2]
					d3[0], d3[1], d3[2], d3[3] = a[3], b[3], e[3], f[3]
				}
				for ; j < j1; j++ {
					k := (j-lo)*r + i
					d := dst[k : k+4 : k+4]
					d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
				}
			}
			for ; i < i1; i++ {
				for j := j0; j < j1; j++ {
					dst[(j-lo)*r+i] = src[i*c+j]
				}
			}
		}
	}
}
