package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamVectorBits: Adam's steps give the same bits with the vector code as with the scalar code
// alone (AdamW and Adam, lengths that leave a scalar tail, gradients with zeros and extremes).
func TestAdamVectorBits(t *testing.T) {
	if !hasAdamVec {
		t.Skip("no vector code on this machine")
	}
	for _, wd := range []float32{0, 0.1} {
		for _, n := range []int{5, 8, 37, 1003} {
			r := rand.New(rand.NewPCG(uint64(n), 5))
			w0, gs := make([]float32, n), make([][]float32, 4)
			for i := range w0 {
				w0[i] = float32(r.NormFloat64())
			}
			for s := range gs {
				gs[s] = make([]float32, n)
				for i := range gs[s] {
					gs[s][i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4)))
				}
				gs[s][0] = 0
			}
			run := func(vec bool) []float32 {
				prev := hasAdamVec
				hasAdamVec = vec
				defer func() { hasAdamVec = prev }()
				w := append([]float32(nil), w0...)
				o := NewAdamW(n, 0.9, 0.95, 1e-8, wd)
				for s, g := range gs {
					if err := o.Step(w, g, 1e-3*float32(s+1)); err != nil {
						t.Fatal(err)
					}
				}
				return append(w, append(o.M, o.V...)...)
			}
			a, b := run(false), run(true)
			for i := range a {
				if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
					t.Fatalf("wd %v n %d: element %d of w, m, v: scalar %v, vector %v", wd, n, i, a[i], b[i])
				}
			}
		}
	}
}

// BenchmarkAdamStep times one AdamW step over 1M parameters, scalar code alone and with the vector code.
func BenchmarkAdamStep(b *testing.B) {
	const n = 1 << 20
	w, g := make([]float32, n), make([]float32, n)
	for i := range w {
		w[i], g[i] = float32(i%97)/97, float32(i%31-15)/100
	}
	for _, vec := range []bool{false, true} {
		name := "scalar"
		if vec {
			name = "vector"
		}
		b.Run(name, func(b *testing.B) {
			if vec && !hasAdamVec {
				b.Skip("no vector code here")
			}
			prev := hasAdamVec
			hasAdamVec = vec
			defer func() { hasAdamVec = prev }()
			o := NewAdamW(n, 0.9, 0.95, 1e-8, 0.1)
			b.SetBytes(7 * 4 * n)
			for b.Loop() {
				if err := o.Step(w, g, 1e-3); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
