package nn

import (
	"fmt"
	"math"

	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/internal/vec"
)

// ClipByValue clamps every element of g to [-limit, limit]; NaNs are left
// as they are. A negative limit is an error.
func ClipByValue(g []float32, limit float32) error {
	if !(limit >= 0) {
		return fmt.Errorf("nn.ClipByValue: limit %g, want >= 0", limit)
	}
	par.Grained(len(g), elemGrain, func(lo, hi int) {
		r := g[lo:hi]
		for i, v := range r {
			if v > limit {
				r[i] = limit
			} else if v < -limit {
				r[i] = -limit
			}
		}
	})
	return nil
}

// GlobalNorm returns the L2 norm of all the slices taken together, summed
// in float64 (so finite float32 values never overflow it: the norm is inf or
// NaN exactly when an element is). The squares are summed in chunks of
// normChunk elements on all cores and the chunks' sums added in order, so the
// result does not depend on the number of cores.
func GlobalNorm(grads ...[]float32) float64 {
	var chunks [][]float32
	for _, g := range grads {
		for lo := 0; lo < len(g); lo += normChunk {
			chunks = append(chunks, g[lo:min(lo+normChunk, len(g))])
		}
	}
	sums := make([]float64, len(chunks))
	par.Grained(len(chunks), 1, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			sums[c] = sumSquares(chunks[c])
		}
	})
	var ss float64
	for _, v := range sums {
		ss += v
	}
	return math.Sqrt(ss)
}

// sumSquares is the sum of float64(v)^2 over x (laneSum).
func sumSquares(x []float32) float64 { return laneSum(x, true) }

// sum64 is the float64 sum of x (laneSum).
func sum64(x []float32) float64 { return laneSum(x, false) }

// laneSum is the sum of float64(v), squared with square, over x: over the whole blocks of 16 in sixteen
// lanes (element i in lane i%16), the vector code's, added up in order, then the rest in order.
func laneSum(x []float32, square bool) float64 {
	term := func(v float32) float64 {
		if square {
			return float64(v) * float64(v)
		}
		return float64(v)
	}
	var lanes [16]float64
	n := len(x) &^ 15
	if laneSumVec(x, &lanes, square) == 0 {
		for i, v := range x[:n] {
			lanes[i%16] += term(v)
		}
	}
	s := lanes[0]
	for _, l := range lanes[1:] {
		s += l
	}
	for _, v := range x[n:] {
		s += term(v)
	}
	return s
}

// normChunk is the length of GlobalNorm's partial sums.
const normChunk = 1 << 15

// UnscaleClip divides gradients that carry a loss scale by scale and, when
// maxNorm > 0, scales them further so that their global norm is at most
// maxNorm: one pass for the norm, one multiply by the combined factor
// (ClipFactor's). It returns the global norm of the unscaled gradients. When
// that norm is inf or NaN (an element is) the slices are left unchanged: the
// found-inf check of dynamic loss scaling, the caller skipping the step. A
// scale that is not positive and finite, or a negative maxNorm, is an error.
func UnscaleClip(scale, maxNorm float32, grads ...[]float32) (float64, error) {
	norm, f, err := ClipFactor(scale, maxNorm, grads...)
	if err != nil {
		return 0, fmt.Errorf("nn.UnscaleClip: %w", err)
	}
	if math.IsInf(norm, 0) || math.IsNaN(norm) {
		return norm, nil
	}
	if f != 1 {
		for _, g := range grads {
			Scale(g, f)
		}
	}
	return norm, nil
}

// ClipFactor is UnscaleClip's first pass alone: the global norm of the
// gradients divided by scale, and the factor UnscaleClip multiplies them by,
// 1/scale times maxNorm/norm when the norm exceeds maxNorm > 0. The slices
// are left unchanged: an optimizer's StepScaled takes the factor as it reads
// them, a pass over the gradients less. When the norm is inf or NaN the
// factor is 1/scale (the caller skips the step). A scale that is not
// positive and finite, or a negative maxNorm, is an error.
func ClipFactor(scale, maxNorm float32, grads ...[]float32) (float64, float32, error) {
	if !(scale > 0) || math.IsInf(float64(scale), 0) {
		return 0, 0, fmt.Errorf("scale %g, want a positive finite number", scale)
	}
	if !(maxNorm >= 0) {
		return 0, 0, fmt.Errorf("maxNorm %g, want >= 0", maxNorm)
	}
	norm := GlobalNorm(grads...) / float64(scale)
	f := 1 / float64(scale)
	if maxNorm > 0 && norm > float64(maxNorm) && !math.IsInf(norm, 0) {
		f *= float64(maxNorm) / norm
	}
	return norm, float32(f), nil
}

// ClipByGlobalNorm scales all the slices by maxNorm/norm when their global
// L2 norm exceeds maxNorm, so that the norm becomes maxNorm, and returns
// the norm before clipping. A non-finite norm leaves the slices unchanged
// (the caller decides whether to skip the step). A negative maxNorm is an
// error.
func ClipByGlobalNorm(maxNorm float32, grads ...[]float32) (float64, error) {
	if !(maxNorm >= 0) {
		return 0, fmt.Errorf("nn.ClipByGlobalNorm: maxNorm %g, want >= 0", maxNorm)
	}
	norm := GlobalNorm(grads...)
	if norm > float64(maxNorm) && !math.IsInf(norm, 0) {
		s := float32(float64(maxNorm) / norm)
		for _, g := range grads {
			Scale(g, s)
		}
	}
	return norm, nil
}

// Scale multiplies every element of x by s.
func Scale(x []float32, s float32) {
	par.Grained(len(x), elemGrain, func(lo, hi int) {
		r := x[lo:hi]
		for i := vec.VS(vec.Mul, r, r, s); i < len(r); i++ {
			r[i] *= s
		}
	})
}
