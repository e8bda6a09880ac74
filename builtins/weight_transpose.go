package builtins

import (
	"runtime"
	"sync"
)

// Transposed weights. A backward kernel bakes in W^T for a weight W that the script keeps as [out, in];
// p.weight(..., transpose = True) writes W^T into a scratch buffer that lives across programs (the
// builder encodes it into the weight file at once), so that a script rebuilding its kernels after
// every update neither allocates nor pages in a transposed copy of each matrix.

// transposeScratch holds scratch buffers for transposed weights; its buffers are dropped by the
// collector when unused.
var transposeScratch sync.Pool // *[]float32

// withTransposed calls f with the transpose (c x r) of the row-major r x c matrix src, in a scratch
// buffer that f must not keep.
func withTransposed(src []float32, r, c int, f func(t []float32)) {
	p, _ := transposeScratch.Get().(*[]float32)
	if p == nil || cap(*p) < len(src) {
		b := make([]float32, len(src))
		p = &b
	}
	dst := (*p)[:len(src)]
	transposeParallel(dst, src, r, c)
	f(dst)
	transposeScratch.Put(p)
}

// transposeGrain is the fewest elements one goroutine of transposeParallel moves.
const transposeGrain = 1 << 16

// transposeParallel writes the transpose of the r x c matrix src into dst (c x r), the destination
// rows split in bands of whole tiles over up to GOMAXPROCS goroutines.
func transposeParallel(dst, src []float32, r, c int) {
	tiles := (c + weightTile - 1) / weightTile
	parts := min(runtime.GOMAXPROCS(0), tiles, max(1, r*c/transposeGrain))
	if parts <= 1 {
		transposeCols(dst, src, r, c, 0, c)
		return
	}
	var wg sync.WaitGroup
	per := (tiles + parts - 1) / parts * weightTile
	for lo := 0; lo < c; lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			transposeCols(dst, src, r, c, lo, hi)
		}(lo, min(lo+per, c))
	}
	wg.Wait()
}

// weightTile is the side of the square tiles transposeCols moves, in 4x4 blocks. 16 measured fastest
// (by about a third over transpose2D's loop) on the [768, 2048], [2048, 768] and [768, 768] matrices
// of the reference layer.
const weightTile = 16

// transposeCols writes destination rows lo to hi (source columns [lo, hi)) of the transpose of the
// r x c matrix src into dst, tile by tile, each tile in 4x4 blocks: four source rows are read four
// values at a time and four destination rows written four values at a time.
func transposeCols(dst, src []float32, r, c, lo, hi int) {
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
					d0 := dst[j*r+i : j*r+i+4 : j*r+i+4]
					d1 := dst[(j+1)*r+i : (j+1)*r+i+4 : (j+1)*r+i+4]
					d2 := dst[(j+2)*r+i : (j+2)*r+i+4 : (j+2)*r+i+4]
					d3 := dst[(j+3)*r+i : (j+3)*r+i+4 : (j+3)*r+i+4]
					d0[0], d0[1], d0[2], d0[3] = a[0], b[0], e[0], f[0]
					d1[0], d1[1], d1[2], d1[3] = a[1], b[1], e[1], f[1]
					d2[0], d2[1], d2[2], d2[3] = a[2], b[2], e[2], f[2]
					d3[0], d3[1], d3[2], d3[3] = a[3], b[3], e[3], f[3]
				}
				for ; j < j1; j++ {
					d := dst[j*r+i : j*r+i+4 : j*r+i+4]
					d[0], d[1], d[2], d[3] = s0[j], s1[j], s2[j], s3[j]
				}
			}
			for ; i < i1; i++ {
				for j := j0; j < j1; j++ {
					dst[j*r+i] = src[i*c+j]
				}
			}
		}
	}
}
