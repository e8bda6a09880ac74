package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestClipVectorBits: GlobalNorm, sum64 (the softmax's sums) and Scale give the same bits with the vector code as with the scalar
// code alone, over lengths that leave scalar tails and several partial-sum chunks, with zeros, large
// and tiny values; and GlobalNorm agrees with a float64 sum to its rounding.
func TestClipVectorBits(t *testing.T) {
	if !hasClipVec {
		t.Skip("no vector code on this machine")
	}
	r := rand.New(rand.NewPCG(31, 32))
	for _, n := range []int{1, 15, 16, 17, 100, normChunk + 37, 3*normChunk + 5} {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(13)-6)))
		}
		x[0] = 0
		run := func(vec bool) (float64, float64, []float32) {
			prev := hasClipVec
			hasClipVec = vec
			defer func() { hasClipVec = prev }()
			y := append([]float32(nil), x...)
			norm := GlobalNorm(y, x[:n/2])
			Scale(y, 0.37)
			return norm, sum64(x), y
		}
		na, sa, a := run(false)
		nb, sb, b := run(true)
		if math.Float64bits(na) != math.Float64bits(nb) {
			t.Fatalf("n %d: GlobalNorm scalar %v, vector %v", n, na, nb)
		}
		if math.Float64bits(sa) != math.Float64bits(sb) {
			t.Fatalf("n %d: sum64 scalar %v, vector %v", n, sa, sb)
		}
		for i := range a {
			// Scale runs on internal/vec whatever hasClipVec says: both against the scalar product.
			if want := x[i] * 0.37; math.Float32bits(a[i]) != math.Float32bits(want) || math.Float32bits(b[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: Scale element %d: %v and %v, want %v", n, i, a[i], b[i], want)
			}
		}
		var ss float64
		for _, v := range append(append([]float32(nil), x...), x[:n/2]...) {
			ss += float64(v) * float64(v)
		}
		if want := math.Sqrt(ss); math.Abs(nb-want) > 1e-12*want {
			t.Fatalf("n %d: GlobalNorm %v, float64 sum %v", n, nb, want)
		}
	}
}
