package cpu

import (
	"fmt"
	"math"
)

// ClipByValue clamps every element of g to [-limit, limit]; NaNs are left
// as they are. A negative limit is an error.
func ClipByValue(g []float32, limit float32) error {
	if !(limit >= 0) {
		return fmt.Errorf("cpu.ClipByValue: limit %g, want >= 0", limit)
	}
	parallelFor(len(g), elemGrain, func(lo, hi int) {
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
// in float64.
func GlobalNorm(grads ...[]float32) float64 {
	var ss float64
	for _, g := range grads {
		for _, v := range g {
			ss += float64(v) * float64(v)
		}
	}
	return math.Sqrt(ss)
}

// ClipByGlobalNorm scales all the slices by maxNorm/norm when their global
// L2 norm exceeds maxNorm, so that the norm becomes maxNorm, and returns
// the norm before clipping. A non-finite norm leaves the slices unchanged
// (the caller decides whether to skip the step). A negative maxNorm is an
// error.
func ClipByGlobalNorm(maxNorm float32, grads ...[]float32) (float64, error) {
	if !(maxNorm >= 0) {
		return 0, fmt.Errorf("cpu.ClipByGlobalNorm: maxNorm %g, want >= 0", maxNorm)
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
	parallelFor(len(x), elemGrain, func(lo, hi int) {
		r := x[lo:hi]
		for i := range r {
			r[i] *= s
		}
	})
}
