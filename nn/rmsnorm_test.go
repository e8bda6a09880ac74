package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rmsNorm64 is RMSNorm written from its definition in float64.
func rmsNorm64(x, w []float64, C, S int, eps float64) []float64 {
	out := make([]float64, C*S)
	for s := range S {
		var ss float64
		for c := range C {
			ss += x[c*S+s] * x[c*S+s]
		}
		r := 1 / math.Sqrt(ss/float64(C)+eps)
		for c := range C {
			out[c*S+s] = w[c] * x[c*S+s] * r
		}
	}
	return out
}

// rmsNormGrad64 is the exact gradient of sum(dy*RMSNorm(x, w)), from the
// chain rule in float64.
func rmsNormGrad64(dy, x, w []float64, C, S int, eps float64) (dx, dw []float64) {
	dx, dw = make([]float64, C*S), make([]float64, C)
	for s := range S {
		var ss, dot float64
		for c := range C {
			ss += x[c*S+s] * x[c*S+s]
			dot += dy[c*S+s] * w[c] * x[c*S+s]
		}
		r := 1 / math.Sqrt(ss/float64(C)+eps)
		for c := range C {
			i := c*S + s
			dx[i] = w[c]*dy[i]*r - x[i]*r*r*r/float64(C)*dot
			dw[c] += dy[i] * x[i] * r
		}
	}
	return dx, dw
}

func TestRMSNormFiniteDifferences(t *testing.T) {
	const C, S, eps = 6, 5, 1e-5
	rng := rand.New(rand.NewPCG(11, 12))
	x, w, dy := randNorm(rng, C*S, 1), randNorm(rng, C, 1), randNorm(rng, C*S, 1)
	x64, w64, dy64 := to64(x), to64(w), to64(dy)
	loss := func(x, w []float64) float64 {
		var l float64
		for i, v := range rmsNorm64(x, w, C, S, eps) {
			l += v * dy64[i]
		}
		return l
	}
	wantDx := numGrad(func(v []float64) float64 { return loss(v, w64) }, x64)
	wantDw := numGrad(func(v []float64) float64 { return loss(x64, v) }, w64)

	out := make([]float32, C*S)
	if err := RMSNorm(out, x, w, C, S, eps); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "out", out, rmsNorm64(x64, w64, C, S, eps), 1e-5, 1e-6)

	dx, dw := make([]float32, C*S), make([]float32, C)
	dw[0] = 10 // accumulated into
	if err := RMSNormBackward(dx, dw, dy, x, w, C, S, eps); err != nil {
		t.Fatal(err)
	}
	wantDw[0] += 10
	closeTo(t, "dx", dx, wantDx, 1e-4, 1e-5)
	closeTo(t, "dw", dw, wantDw, 1e-4, 1e-5)
}

func TestRMSNormLarge(t *testing.T) {
	const C, S, eps = 96, 1024, 1e-5 // big enough to split over goroutines
	rng := rand.New(rand.NewPCG(13, 14))
	x, w, dy := randNorm(rng, C*S, 2), randNorm(rng, C, 1), randNorm(rng, C*S, 1)
	out := make([]float32, C*S)
	if err := RMSNorm(out, x, w, C, S, eps); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "out", out, rmsNorm64(to64(x), to64(w), C, S, eps), 1e-5, 1e-6)
	wantDx, wantDw := rmsNormGrad64(to64(dy), to64(x), to64(w), C, S, eps)
	dx, dw := make([]float32, C*S), make([]float32, C)
	if err := RMSNormBackward(dx, dw, dy, x, w, C, S, eps); err != nil {
		t.Fatal(err)
	}
	closeTo(t, "dx", dx, wantDx, 1e-4, 1e-5)
	closeTo(t, "dw", dw, wantDw, 1e-4, 1e-3)

	// In place: out aliasing x, dx aliasing dy.
	if err := RMSNorm(x, x, w, C, S, eps); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if x[i] != out[i] {
			t.Fatalf("in-place RMSNorm differs at %d", i)
		}
	}
}

func TestRMSNormErrors(t *testing.T) {
	s := make([]float32, 12)
	if err := RMSNorm(s, s, s[:2], 3, 4, 1e-5); err == nil {
		t.Error("short w: no error")
	}
	if err := RMSNorm(s[:11], s, s, 3, 4, 1e-5); err == nil {
		t.Error("short out: no error")
	}
	if err := RMSNorm(s, s, s, 0, 4, 1e-5); err == nil {
		t.Error("C = 0: no error")
	}
	if err := RMSNormBackward(s, s[:2], s, s, s, 3, 4, 1e-5); err == nil {
		t.Error("short dw: no error")
	}
	if err := RMSNormBackward(s, s, s[:5], s, s, 3, 4, 1e-5); err == nil {
		t.Error("short dy: no error")
	}
	if err := RMSNormBackward(s, s, s, s, s, 1<<40, 1<<40, 1e-5); err == nil {
		t.Error("overflowing dims: no error")
	}
}

// TestRMSNormVectorBits: RMSNorm and its backward give the same bits with the vector code as with the
// scalar code alone, at sizes that leave scalar tails and split over goroutines, dx aliasing dy.
func TestRMSNormVectorBits(t *testing.T) {
	if !hasRMSVec {
		t.Skip("no vector code on this machine")
	}
	for _, sz := range [][2]int{{1, 8}, {3, 5}, {6, 37}, {96, 1024}, {256, 1030}} {
		C, S := sz[0], sz[1]
		rng := rand.New(rand.NewPCG(uint64(C), uint64(S)))
		x, w, dy := randNorm(rng, C*S, 2), randNorm(rng, C, 1), randNorm(rng, C*S, 1)
		run := func(vec bool) []float32 {
			prev := hasRMSVec
			hasRMSVec = vec
			defer func() { hasRMSVec = prev }()
			out, dx, dw := make([]float32, C*S), append([]float32(nil), dy...), make([]float32, C)
			if err := RMSNorm(out, x, w, C, S, 1e-5); err != nil {
				t.Fatal(err)
			}
			if err := RMSNormBackward(dx, dw, dx, x, w, C, S, 1e-5); err != nil {
				t.Fatal(err)
			}
			return append(out, append(dx, dw...)...)
		}
		a, b := run(false), run(true)
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("C %d S %d: element %d of out, dx, dw: scalar %v, vector %v", C, S, i, a[i], b[i])
			}
		}
	}
}

// benchVec runs f as sub-benchmarks "scalar" (the vector code off) and "vector", where there is one.
func benchVec(b *testing.B, on *bool, f func(b *testing.B)) {
	for _, vec := range []bool{false, true} {
		if vec && !*on {
			continue
		}
		name := map[bool]string{false: "scalar", true: "vector"}[vec]
		b.Run(name, func(b *testing.B) {
			prev := *on
			*on = vec
			defer func() { *on = prev }()
			f(b)
		})
	}
}

func BenchmarkRMSNorm(b *testing.B) {
	const C, S = 768, 512
	rng := rand.New(rand.NewPCG(15, 16))
	x, w, out := randNorm(rng, C*S, 1), randNorm(rng, C, 1), make([]float32, C*S)
	b.SetBytes(4 * C * S)
	benchVec(b, &hasRMSVec, func(b *testing.B) {
		for b.Loop() {
			if err := RMSNorm(out, x, w, C, S, 1e-5); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkRMSNormBackward(b *testing.B) {
	const C, S = 768, 512
	rng := rand.New(rand.NewPCG(15, 16))
	x, w, dy := randNorm(rng, C*S, 1), randNorm(rng, C, 1), randNorm(rng, C*S, 1)
	dx, dw := make([]float32, C*S), make([]float32, C)
	b.SetBytes(4 * C * S)
	benchVec(b, &hasRMSVec, func(b *testing.B) {
		for b.Loop() {
			if err := RMSNormBackward(dx, dw, dy, x, w, C, S, 1e-5); err != nil {
				b.Fatal(err)
			}
		}
	})
}
