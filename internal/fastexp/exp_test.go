package fastexp

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/simdtest"
)

func TestExp32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(x float32) {
		got := float64(Exp32(x))
		want := math.Exp(float64(x))
		if want > math.MaxFloat32 {
			if !math.IsInf(got, 1) {
				t.Errorf("Exp32(%v) = %v, want +Inf", x, got)
			}
			return
		}
		// 2 ulp of float32 at the result, or the smallest subnormal for tiny results.
		tol := math.Max(2*math.Abs(want)*math.Pow(2, -23), math.Pow(2, -149))
		if math.Abs(got-want) > tol {
			t.Errorf("Exp32(%v) = %v, want %v (error %g > %g)", x, got, want, math.Abs(got-want), tol)
		}
	}
	for range 200000 {
		check(float32(rng.Float64()*200 - 100))
	}
	for _, x := range []float32{0, -0, 1, -1, 88.7, 88.72, 89, -87, -88, -100, -103.9, -104, -150, 1e-8, -1e-8} {
		check(x)
	}
	if v := Exp32(float32(math.Inf(-1))); v != 0 {
		t.Errorf("Exp32(-Inf) = %v, want 0", v)
	}
	if v := Exp32(float32(math.NaN())); v == v {
		t.Errorf("Exp32(NaN) = %v, want NaN", v)
	}
}

// expShifted gives exp32's bits: on random arguments across the whole range, at the ends of its fast
// range and at the points where exp32's 2^n scaling changes, shifted and negated.
func TestExpShiftedMatchesExp32(t *testing.T) { simdtest.EachWidth(t, &use512, shiftedMatchesExp32) }

func shiftedMatchesExp32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var src []float32
	for range 300000 {
		src = append(src, float32(rng.Float64()*220-110))
	}
	for range 100000 {
		src = append(src, math.Float32frombits(rng.Uint32()))
	}
	for _, x := range []float32{0, -0, 88, 88.0001, -86, -86.0001, 88.72283, 88.72284, 88.7229, -87.33, -87.34,
		-103.97207, -103.97208, -103.9721, -104, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		// Neighbours of each edge value, too.
		b := math.Float32bits(x)
		src = append(src, x, math.Float32frombits(b+1), math.Float32frombits(b-1))
	}
	// Arguments where x*log2e + 0.5 is near a whole number: the floor's edge.
	for n := -150; n <= 130; n++ {
		x := float32((float64(n) - 0.5) / math.Log2E)
		b := math.Float32bits(x)
		for d := uint32(0); d < 4; d++ {
			src = append(src, math.Float32frombits(b+d), math.Float32frombits(b-d))
		}
	}
	dst := make([]float32, len(src))
	for _, c := range []struct {
		shift float32
		neg   bool
	}{{0, false}, {0, true}, {3.25, false}, {-7.5, true}} {
		Shifted(dst, src, c.shift, c.neg)
		for i, x := range src {
			if c.neg {
				x = -x
			}
			want := Exp32(x - c.shift)
			if math.Float32bits(dst[i]) != math.Float32bits(want) && !(want != want && dst[i] != dst[i]) {
				t.Fatalf("shift %v neg %v: Shifted(%v) = %v, exp32 gives %v", c.shift, c.neg, src[i], dst[i], want)
			}
		}
	}
}

// The vector blocks give expShiftedGo's bits (and so exp32's) on every kind of argument: random bit
// patterns, the edges of each range the vector code decides between, blocks mixing lanes it handles with
// lanes it leaves to the scalar code, every tail length, and dst aliasing src.
func TestExpShiftedVectorMatchesScalar(t *testing.T) {
	if !hasExpVec {
		t.Skip("no vector exp on this CPU")
	}
	simdtest.EachWidth(t, &use512, vectorMatchesScalar)
}

func vectorMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	edges := []float32{expFastLo, expFastHi, expUnder, expOver, 0, float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), -87, 88.5}
	pick := func() float32 {
		switch rng.IntN(4) {
		case 0:
			return math.Float32frombits(rng.Uint32())
		case 1:
			e := math.Float32bits(edges[rng.IntN(len(edges))])
			return math.Float32frombits(e + uint32(rng.IntN(5)) - 2)
		default:
			return float32(rng.Float64()*240 - 120)
		}
	}
	for trial := range 4000 {
		n := rng.IntN(70)
		if trial%10 == 0 {
			n = 2000
		}
		src := make([]float32, n)
		for i := range src {
			src[i] = pick()
		}
		if trial%2 == 0 { // mostly fast-range blocks, with an occasional stray lane
			for i := range src {
				src[i] = float32(rng.Float64()*160 - 80)
				if rng.IntN(50) == 0 {
					src[i] = pick()
				}
			}
		}
		shift, neg := float32(rng.Float64()*20-10), rng.IntN(2) == 0
		want := make([]float32, n)
		expShiftedGo(want, src, shift, neg)
		got := make([]float32, n)
		Shifted(got, src, shift, neg)
		inPlace := append([]float32(nil), src...)
		Shifted(inPlace, inPlace, shift, neg)
		for i := range want {
			w := math.Float32bits(want[i])
			if math.Float32bits(got[i]) != w || math.Float32bits(inPlace[i]) != w {
				t.Fatalf("n=%d shift=%v neg=%v: exp of %v at %d: vector %v (in place %v), scalar %v",
					n, shift, neg, src[i], i, got[i], inPlace[i], want[i])
			}
		}
	}
}

func BenchmarkExpShifted(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	src := make([]float32, 4096)
	for i := range src {
		src[i] = float32(rng.Float64()*-30 + 5)
	}
	dst := make([]float32, len(src))
	b.Run("dispatch", func(b *testing.B) { // at 256 bits (AVX2) and, where they run, 512 (AVX-512)
		simdtest.EachWidthBench(b, &use512, func(b *testing.B) {
			b.SetBytes(4 * int64(len(src)))
			for b.Loop() {
				Shifted(dst, src, 5, false)
			}
		})
	})
	b.Run("go", func(b *testing.B) {
		b.SetBytes(4 * int64(len(src)))
		for b.Loop() {
			expShiftedGo(dst, src, 5, false)
		}
	})
}
