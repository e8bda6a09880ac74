// Package numtest holds the helpers that numerics tests share: finite differences, float64 copies,
// random normal slices, a tolerance check, and the fixed-order gemm that exactness tests run on. Only
// tests import it.
package numtest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/cpu"
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

// FixedOrderGemm makes every product of the test run through cpu's reference gemm, which sums each
// element in one fixed order whatever the product's shape, blocking or transpose flags, until the test
// ends. A rewrite of our own (a fusion, a folded transpose, row blocks, rows computed apart) is exact
// only as a property of our code on such a gemm: a real BLAS may sum a row block, or a transposed
// product, in another order (neither OpenBLAS, whose kernels differ by CPU, nor gonum promises
// otherwise), so bit-equality there would test the BLAS.
func FixedOrderGemm(t testing.TB) {
	t.Helper()
	prev := cpu.BLASName()
	if err := cpu.SetBLAS(cpu.ReferenceBLAS); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if prev == "none" {
			prev = "auto"
		}
		if err := cpu.SetBLAS(prev); err != nil {
			t.Error(err)
		}
	})
}
