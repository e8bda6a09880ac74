package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/vec"
)

// A product of up to fewRows rows with B not transposed gives the fixed-order loop's bits, whatever the
// library, where the vector code runs: transposed A or not, leading dimensions past the rows, column counts with and without a
// tail past the last eight, values that sum to -0, inf and NaN.
func TestFewRowsSameBitsAsReference(t *testing.T) {
	if !vec.Has() {
		t.Skip("no vector code here: such products go to the library, in its order")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct{ m, n, k int }{{1, 8, 9}, {2, 129, 8}, {2, 40, 128}, {3, 17, 70}, {4, 300, 3}, {2, 64, 100}} {
		for _, transA := range []bool{false, true} {
			lda, ldb, ldc := tc.k+r.IntN(3), tc.n+r.IntN(3), tc.n+r.IntN(3)
			arows := tc.m
			if transA {
				lda, arows = tc.m+r.IntN(3), tc.k
			}
			a, b := make([]float32, arows*lda), make([]float32, tc.k*ldb)
			for i := range a {
				a[i] = float32(r.NormFloat64())
			}
			for i := range b {
				b[i] = float32(r.NormFloat64() * 3)
			}
			b[0], b[1] = float32(math.Inf(1)), float32(math.NaN())
			got, want := make([]float32, tc.m*ldc), make([]float32, tc.m*ldc)
			if err := Sgemm(transA, false, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 0, got, ldc); err != nil {
				t.Fatal(err)
			}
			referenceSgemm(transA, false, tc.m, tc.n, tc.k, 1, a, lda, b, ldb, 0, want, ldc)
			for i := range tc.m {
				for j := range tc.n {
					g, w := got[i*ldc+j], want[i*ldc+j]
					if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
						t.Fatalf("%dx%dx%d transA %v: C[%d, %d] = %v, the fixed-order loop's %v", tc.m, tc.n, tc.k, transA, i, j, g, w)
					}
				}
			}
		}
	}
}
