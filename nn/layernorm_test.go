package nn

import (
	"math/rand/v2"
	"testing"
)

// layerNorm64 is LayerNorm (no bias) in float64: RMSNorm of the centred columns, the mean and the
// variance by their definitions.
func layerNorm64(x, w []float64, C, S int, eps float64) []float64 {
	return rmsNorm64(centred64(x, C, S), w, C, S, eps)
}

// TestLayerNormFiniteDifferences checks LayerNorm against its float64 definition and its backward
// against central differences of sum(dy * LayerNorm(x, w)), at a size that splits over goroutines
// too, in place (out aliasing x, dx aliasing dy) as well.
func TestLayerNormFiniteDifferences(t *testing.T) {
	const eps = 1e-5
	for _, sz := range [][2]int{{6, 5}, {96, 1024}} {
		C, S := sz[0], sz[1]
		rng := rand.New(rand.NewPCG(uint64(C), 21))
		x, w, dy := randNorm(rng, C*S, 1), randNorm(rng, C, 1), randNorm(rng, C*S, 1)
		for i := range x {
			x[i] += 0.5 // a mean the norm must remove
		}
		x64, w64, dy64 := to64(x), to64(w), to64(dy)
		out := make([]float32, C*S)
		if err := LayerNorm(out, x, w, C, S, eps); err != nil {
			t.Fatal(err)
		}
		closeTo(t, "out", out, layerNorm64(x64, w64, C, S, eps), 1e-5, 1e-6)
		dx, dw := make([]float32, C*S), make([]float32, C)
		dw[0] = 10 // accumulated into
		if err := LayerNormBackward(dx, dw, dy, x, w, C, S, eps); err != nil {
			t.Fatal(err)
		}
		if C*S <= 64 { // central differences of every element
			loss := func(x, w []float64) float64 {
				var l float64
				for i, v := range layerNorm64(x, w, C, S, eps) {
					l += v * dy64[i]
				}
				return l
			}
			wantDx := numGrad(func(v []float64) float64 { return loss(v, w64) }, x64)
			wantDw := numGrad(func(v []float64) float64 { return loss(x64, v) }, w64)
			wantDw[0] += 10
			closeTo(t, "dx", dx, wantDx, 1e-4, 1e-5)
			closeTo(t, "dw", dw, wantDw, 1e-4, 1e-5)
		} else { // the chain rule in float64: RMSNorm's exact gradient of the centred x, centred
			g, wantDw := rmsNormGrad64(dy64, centred64(x64, C, S), w64, C, S, eps)
			g = centred64(g, C, S)
			wantDw[0] += 10
			closeTo(t, "dx", dx, g, 1e-4, 1e-5)
			closeTo(t, "dw", dw, wantDw, 1e-4, 1e-3)
			d2, dw2 := append([]float32(nil), dy...), make([]float32, C)
			dw2[0] = 10
			if err := LayerNormBackward(d2, dw2, d2, x, w, C, S, eps); err != nil {
				t.Fatal(err)
			}
			if err := LayerNorm(x, x, w, C, S, eps); err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if x[i] != out[i] || d2[i] != dx[i] {
					t.Fatalf("in-place LayerNorm or its backward differs at %d", i)
				}
			}
		}
	}
}

func TestLayerNormErrors(t *testing.T) {
	s := make([]float32, 12)
	if err := LayerNorm(s, s, s[:2], 3, 4, 1e-5); err == nil {
		t.Error("short w: no error")
	}
	if err := LayerNormBackward(s, s, s[:5], s, s, 3, 4, 1e-5); err == nil {
		t.Error("short dy: no error")
	}
	if err := LayerNormBackward(s, s, s, s, s, 1<<40, 1<<40, 1e-5); err == nil {
		t.Error("overflowing dims: no error")
	}
}

// centred64 is x [C, S] less the mean of each column.
func centred64(x []float64, C, S int) []float64 {
	out := append([]float64(nil), x...)
	for s := range S {
		var m float64
		for c := range C {
			m += x[c*S+s]
		}
		for c := range C {
			out[c*S+s] -= m / float64(C)
		}
	}
	return out
}
