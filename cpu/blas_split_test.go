package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Products large enough to be split over goroutines (in rows when m >= n, else in columns) match the
// float64 definition, with padded leading dimensions and every transposition, and the serial entry
// point gives the same values.
func TestSgemmSplit(t *testing.T) {
	lib, err := loadLibrary("openblas")
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	old := lib.goSplit.Load()
	lib.goSplit.Store(true)
	defer lib.goSplit.Store(old)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{257, 96, 200}, {96, 257, 200}, {33, 1000, 130}} {
		m, n, k := sz[0], sz[1], sz[2]
		if 2*m*n*k < splitFLOPs {
			t.Fatalf("%v is too small to split", sz)
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				ar, ac := m, k
				if tA {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+3, bc+1, n+2
				a, b := randSlice(rng, ar*lda), randSlice(rng, br*ldb)
				c := randSlice(rng, m*ldc)
				c2 := append([]float32(nil), c...)
				want, scale := refSgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c, ldc)
				if err := lib.Sgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c, ldc); err != nil {
					t.Fatal(err)
				}
				if err := lib.sgemmSerial(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c2, ldc); err != nil {
					t.Fatal(err)
				}
				for i := range m {
					for j := range n {
						got := float64(c[i*ldc+j])
						if d := math.Abs(got - want[i*n+j]); d > 1e-5*scale[i*n+j]+1e-30 {
							t.Fatalf("%v tA=%v tB=%v: C[%d,%d] = %v, want %v", sz, tA, tB, i, j, got, want[i*n+j])
						}
						if d := math.Abs(got - float64(c2[i*ldc+j])); d > 1e-5*scale[i*n+j]+1e-30 {
							t.Fatalf("%v tA=%v tB=%v: split %v, serial %v", sz, tA, tB, got, c2[i*ldc+j])
						}
					}
					for j := n; j < ldc; j++ { // the padding is untouched
						if c[i*ldc+j] != c2[i*ldc+j] {
							t.Fatalf("padding of row %d changed", i)
						}
					}
				}
			}
		}
	}
}
