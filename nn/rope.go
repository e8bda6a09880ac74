package nn

import (
	"fmt"
	"math"
)

// RoPETables writes the rotary position tables of llama2.c's model into out,
// channel-first [heads*headDim, seq]: row h*headDim/2 + i (the cosines, the
// first heads*headDim/2 rows) holds cos(t * theta^(-2i/headDim)) at column
// t, and the same row plus heads*headDim/2 holds the sine. Position t
// rotates the adjacent pair (x[2i], x[2i+1]) of every head by that angle:
//
//	x'[2i]   = x[2i] cos - x[2i+1] sin
//	x'[2i+1] = x[2i] sin + x[2i+1] cos
//
// The rows repeat per head so that a kernel multiplies a [dim/2, seq] half of
// a [dim, seq] activation with one slice. headDim must be even; angles are
// computed in float64 and rounded once.
func RoPETables(out []float32, headDim, heads, seq int, theta float64) error {
	chk := lengthCheck{op: "nn.RoPETables"}
	chk.dims("head_dim, heads, seq", headDim, heads, seq)
	if chk.err != nil {
		return chk.err
	}
	if headDim%2 != 0 {
		return fmt.Errorf("nn.RoPETables: head_dim %d is odd, want even (pairs are rotated)", headDim)
	}
	if !(theta > 0) || math.IsInf(theta, 0) {
		return fmt.Errorf("nn.RoPETables: theta %g, want a finite number > 0", theta)
	}
	half := heads * headDim / 2
	chk.atLeast("out", out, 2*half*seq)
	if chk.err != nil {
		return chk.err
	}
	for i := range headDim / 2 {
		freq := math.Pow(theta, -float64(2*i)/float64(headDim))
		for t := range seq {
			s, c := math.Sincos(float64(t) * freq)
			for h := range heads {
				r := h*headDim/2 + i
				out[r*seq+t] = float32(c)
				out[(half+r)*seq+t] = float32(s)
			}
		}
	}
	return nil
}
