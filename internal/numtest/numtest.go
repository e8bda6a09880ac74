// Package numtest holds the helpers that the tests of the host math (nn, optim) share: finite
// differences, float64 copies, random normal slices and a tolerance check. Only tests import it.
package numtest

import (
	"math"
	"math/rand/v2"
	"testing"
)

// NumGrad returns the central finite-difference gradient of f at x, in float64.
func NumGrad(f func(x []float64) float64, x []float64) []float64 {
	g := make([]float64, len(x))
	for i := range x {
		h := 1e-6 * max(1, math.Abs(x[i]))
		old := x[i]
		x[i] = old + h
		fp := f(x)
		x[i] = old - h
		fm := f(x)
		x[i] = old
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// To64 returns x converted to float64.
func To64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// CloseTo fails the test at the first element where got and want differ by more than
// atol + rtol*|want|.
func CloseTo(t *testing.T, what string, got []float32, want []float64, rtol, atol float64) {
	t.Helper()
	if len(got) < len(want) {
		t.Fatalf("%s: got %d values, want %d", what, len(got), len(want))
	}
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= atol+rtol*math.Abs(w)) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], w)
		}
	}
}

// RandNorm returns n normal random values of standard deviation scale.
func RandNorm(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}
