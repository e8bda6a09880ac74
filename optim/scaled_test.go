package optim

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStepScaledIsStepOfScaledGradient checks every optimizer's StepScaled(w, g, lr, s) against Step
// on a copy of g multiplied by s first, bit for bit, over three steps (the state carries over), at a
// length that leaves a tail after the vector code's blocks, with and without Adam's vector code; g
// itself must come back unchanged. A scale that is not finite is an error.
func TestStepScaledIsStepOfScaledGradient(t *testing.T) {
	const n = 1000 + 5
	makers := map[string]func() Optimizer{
		"sgd":      func() Optimizer { return NewSGD(n) },
		"momentum": func() Optimizer { return NewMomentum(n, 0.9, true) },
		"adagrad":  func() Optimizer { return NewAdaGrad(n, 1e-8) },
		"rmsprop":  func() Optimizer { return NewRMSProp(n, 0.9, 1e-8) },
		"adamw":    func() Optimizer { return NewAdamW(n, 0.9, 0.95, 1e-8, 0.1) },
	}
	for _, vec := range []bool{false, true} {
		if vec && !hasAdamVec {
			continue
		}
		prev := hasAdamVec
		hasAdamVec = vec
		for name, mk := range makers {
			rng := rand.New(rand.NewPCG(1, 2))
			a, b := mk(), mk()
			wa, wb := make([]float32, n), make([]float32, n)
			for i := range wa {
				wa[i] = float32(rng.NormFloat64())
				wb[i] = wa[i]
			}
			for step, s := range []float32{1.0 / 32768, 0.37, 1} {
				g := make([]float32, n)
				for i := range g {
					g[i] = float32(rng.NormFloat64() * 1e3)
				}
				keep := append([]float32(nil), g...)
				scaled := make([]float32, n)
				for i, v := range g {
					scaled[i] = v * s
				}
				if err := a.StepScaled(wa, g, 1e-3, s); err != nil {
					t.Fatal(err)
				}
				if err := b.Step(wb, scaled, 1e-3); err != nil {
					t.Fatal(err)
				}
				for i := range wa {
					if math.Float32bits(wa[i]) != math.Float32bits(wb[i]) {
						t.Fatalf("%s (vector %v) step %d: w[%d] = %v scaled in the step, %v scaled first", name, vec, step, i, wa[i], wb[i])
					}
					if g[i] != keep[i] {
						t.Fatalf("%s: g[%d] changed from %v to %v", name, i, keep[i], g[i])
					}
				}
			}
			for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
				if err := a.StepScaled(wa, wa, 1e-3, bad); err == nil {
					t.Errorf("%s: gradient scale %v: no error", name, bad)
				}
			}
		}
		hasAdamVec = prev
	}
}
