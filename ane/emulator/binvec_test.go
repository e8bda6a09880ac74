package emulator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/half"
)

// TestBinRunVector checks binRun, which runs long runs on the vector code where there is one, against
// the scalar formula element by element (bits, NaN as NaN) for the four arithmetic ops in all three
// operand layouts, at lengths around the vector width and block minimum, from unaligned starts, with
// infinities, signed zeros, subnormals and NaN among the values; and the loops that round as they go
// against the same results rounded by half.RoundF16To.
func TestBinRunVector(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, 65504, 1}
	val := func() float32 {
		if r.IntN(6) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64() * 100)
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	for _, code := range []binCode{opAdd, opSub, opMul, opDiv} {
		for _, n := range []int{1, 7, 8, 31, 32, 33, 39, 40, 100, 1027} {
			for off := range 3 {
				a, b := make([]float32, n+off), make([]float32, n+off)
				for i := range a {
					a[i], b[i] = val(), val()
				}
				for _, layout := range [][2]int{{1, 1}, {1, 0}, {0, 1}} {
					ia, ib := layout[0], layout[1]
					dst := make([]float32, n+off)
					binRun(code, dst[off:], a[off:], ia, b[off:], ib)
					for j := range n {
						want := binScalar(code, a[off+j*ia], b[off+j*ib])
						if got := dst[off+j]; !same(got, want) {
							t.Fatalf("op %d n %d off %d layout %v: element %d = %v, want %v", code, n, off, layout, j, got, want)
						}
					}
					// The rounding loops: each element they do is the op's result rounded to fp16.
					k := binRunRounded(code, dst[off:], a[off:], ia, b[off:], ib)
					if hasRoundVec && n >= binVecMin && k != n&^7 {
						t.Fatalf("op %d n %d layout %v: the rounding loops did %d elements", code, n, layout, k)
					}
					for j := range k {
						want := []float32{binScalar(code, a[off+j*ia], b[off+j*ib])}
						half.RoundF16To(want, want)
						if got := dst[off+j]; !same(got, want[0]) {
							t.Fatalf("op %d n %d off %d layout %v, rounded: element %d = %v, want %v", code, n, off, layout, j, got, want[0])
						}
					}
				}
			}
		}
	}
}

// BenchmarkBinRun times binRun's add of two 16K-element runs (an eval's row block) with and without
// the vector code.
func BenchmarkBinRun(b *testing.B) {
	x, y, dst := make([]float32, 1<<14), make([]float32, 1<<14), make([]float32, 1<<14)
	for i := range x {
		x[i], y[i] = float32(i), float32(2*i)
	}
	for _, vec := range []bool{false, true} {
		name := "scalar"
		if vec {
			name = "vector"
		}
		b.Run(name, func(b *testing.B) {
			if vec && !hasBinVec {
				b.Skip("no vector code here")
			}
			prev := hasBinVec
			hasBinVec = vec
			defer func() { hasBinVec = prev }()
			b.SetBytes(int64(12 * len(x)))
			for b.Loop() {
				binRun(opMul, dst, x, 1, y, 1)
			}
		})
	}
}
