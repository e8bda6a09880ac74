package builtins

import (
	"fmt"
	"github.com/anestar/anestar/internal/transpose"

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
	// Chunks are bands of destination rows: values [lo, hi) are rows (source columns) lo/r to hi/r.
	return bl.WeightFunc(name, dt, shape, weightBand*r, func(lo, hi int, dst []float32) {
		transpose.Transpose(dst, r, src[lo/r:], c, r, (hi-lo)/r) // the band fits dst: no error
	}), nil
}

// weightBand is the number of destination rows of one band of a transposed weight.
const weightBand = 16
