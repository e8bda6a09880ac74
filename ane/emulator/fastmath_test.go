package emulator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/cpu"
)

func TestExp32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(x float32) {
		got := float64(exp32(x))
		want := math.Exp(float64(x))
		if want > math.MaxFloat32 {
			if !math.IsInf(got, 1) {
				t.Errorf("exp32(%v) = %v, want +Inf", x, got)
			}
			return
		}
		// 2 ulp of float32 at the result, or the smallest subnormal for tiny results.
		tol := math.Max(2*math.Abs(want)*math.Pow(2, -23), math.Pow(2, -149))
		if math.Abs(got-want) > tol {
			t.Errorf("exp32(%v) = %v, want %v (error %g > %g)", x, got, want, math.Abs(got-want), tol)
		}
	}
	for range 200000 {
		check(float32(rng.Float64()*200 - 100))
	}
	for _, x := range []float32{0, -0, 1, -1, 88.7, 88.72, 89, -87, -88, -100, -103.9, -104, -150, 1e-8, -1e-8} {
		check(x)
	}
	if v := exp32(float32(math.Inf(-1))); v != 0 {
		t.Errorf("exp32(-Inf) = %v, want 0", v)
	}
	if v := exp32(float32(math.NaN())); v == v {
		t.Errorf("exp32(NaN) = %v, want NaN", v)
	}
}

// round16 must agree with the cpu package's conversion on every float32 class.
func TestRound16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(x float32) {
		got, want := round16(x), cpu.F16ToF32(cpu.F32ToF16(x))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Errorf("round16(%v) = %v, want %v", x, got, want)
		}
	}
	for range 1000000 {
		check(math.Float32frombits(rng.Uint32()))
	}
	for _, x := range []float32{0, 65504, 65519.99, 65520, -65520, 1 + 1.0/2048, 1 + 3.0/2048, 6e-8, 3e-8, 2.98e-8, 6.1e-5, 1e-45} {
		check(x)
	}
}
