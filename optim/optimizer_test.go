package optim

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// optCase pairs an optimizer with its update written from the formulas in
// float64: ref(w, g, state, t) updates w and state for step t (from 1).
type optCase struct {
	name string
	make func(n int) Optimizer
	ref  func(w, g []float64, st map[string][]float64, t int, lr float64)
}

func optCases() []optCase {
	return []optCase{
		{"sgd", func(n int) Optimizer { return NewSGD(n) },
			func(w, g []float64, _ map[string][]float64, _ int, lr float64) {
				for i := range w {
					w[i] -= lr * g[i]
				}
			}},
		{"momentum", func(n int) Optimizer { return NewMomentum(n, 0.9, false) },
			func(w, g []float64, st map[string][]float64, _ int, lr float64) {
				v := st["v"]
				for i := range w {
					v[i] = 0.9*v[i] + g[i]
					w[i] -= lr * v[i]
				}
			}},
		{"momentum_dampened", func(n int) Optimizer {
			o := NewMomentum(n, 0.9, false)
			o.Dampening = 0.9 // the reference library's exponential average
			return o
		}, func(w, g []float64, st map[string][]float64, _ int, lr float64) {
			v := st["v"]
			for i := range w {
				v[i] = 0.9*v[i] + 0.1*g[i]
				w[i] -= lr * v[i]
			}
		}},
		{"nesterov", func(n int) Optimizer { return NewMomentum(n, 0.9, true) },
			func(w, g []float64, st map[string][]float64, _ int, lr float64) {
				v := st["v"]
				for i := range w {
					v[i] = 0.9*v[i] + g[i]
					w[i] -= lr * (g[i] + 0.9*v[i])
				}
			}},
		{"adagrad", func(n int) Optimizer { return NewAdaGrad(n, 1e-10) },
			func(w, g []float64, st map[string][]float64, _ int, lr float64) {
				s := st["s"]
				for i := range w {
					s[i] += g[i] * g[i]
					w[i] -= lr * g[i] / (math.Sqrt(s[i]) + 1e-10)
				}
			}},
		{"rmsprop", func(n int) Optimizer { return NewRMSProp(n, 0.9, 1e-8) },
			func(w, g []float64, st map[string][]float64, _ int, lr float64) {
				v := st["v"]
				for i := range w {
					v[i] = 0.9*v[i] + 0.1*g[i]*g[i]
					w[i] -= lr * g[i] / (math.Sqrt(v[i]) + 1e-8)
				}
			}},
		{"adam", func(n int) Optimizer { return NewAdam(n, 0.9, 0.999, 1e-8) },
			func(w, g []float64, st map[string][]float64, t int, lr float64) {
				adam64(w, g, st, t, lr, 0)
			}},
		{"adamw", func(n int) Optimizer { return NewAdamW(n, 0.9, 0.999, 1e-8, 0.1) },
			func(w, g []float64, st map[string][]float64, t int, lr float64) {
				adam64(w, g, st, t, lr, 0.1)
			}},
	}
}

func adam64(w, g []float64, st map[string][]float64, t int, lr, wd float64) {
	m, v := st["m"], st["v"]
	for i := range w {
		w[i] *= 1 - lr*wd
		m[i] = 0.9*m[i] + 0.1*g[i]
		v[i] = 0.999*v[i] + 0.001*g[i]*g[i]
		mh := m[i] / (1 - math.Pow(0.9, float64(t)))
		vh := v[i] / (1 - math.Pow(0.999, float64(t)))
		w[i] -= lr * mh / (math.Sqrt(vh) + 1e-8)
	}
}

func TestOptimizersAgainstFormulas(t *testing.T) {
	const n, steps, lr = 9, 6, 0.03
	rng := rand.New(rand.NewPCG(23, 24))
	w0 := randNorm(rng, n, 1)
	grads := make([][]float32, steps)
	for s := range grads {
		grads[s] = randNorm(rng, n, 1)
	}
	for _, tc := range optCases() {
		o := tc.make(n)
		w := append([]float32(nil), w0...)
		w64 := to64(w0)
		st := map[string][]float64{"v": make([]float64, n), "s": make([]float64, n), "m": make([]float64, n)}
		for s, g := range grads {
			if err := o.Step(w, g, lr); err != nil {
				t.Fatal(err)
			}
			tc.ref(w64, to64(g), st, s+1, lr)
			closeTo(t, tc.name, w, w64, 1e-5, 1e-6)
		}
		if o.State().Steps != steps {
			t.Errorf("%s: %d steps counted, want %d", tc.name, o.State().Steps, steps)
		}
	}
}

// TestOptimizerState checks that saving the state mid-run and restoring it
// into a fresh optimizer continues bit for bit.
func TestOptimizerState(t *testing.T) {
	const n = 5
	rng := rand.New(rand.NewPCG(25, 26))
	w0, g1, g2 := randNorm(rng, n, 1), randNorm(rng, n, 1), randNorm(rng, n, 1)
	for _, tc := range optCases() {
		a := tc.make(n)
		wa := append([]float32(nil), w0...)
		if err := a.Step(wa, g1, 0.1); err != nil {
			t.Fatal(err)
		}
		saved := State{Steps: a.State().Steps}
		for _, s := range a.State().Slots {
			saved.Slots = append(saved.Slots, Slot{s.Name, append([]float32(nil), s.Data...)})
		}
		wb := append([]float32(nil), wa...)
		if err := a.Step(wa, g2, 0.1); err != nil {
			t.Fatal(err)
		}
		b := tc.make(n)
		if err := b.SetState(saved); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := b.Step(wb, g2, 0.1); err != nil {
			t.Fatal(err)
		}
		for i := range wa {
			if math.Float32bits(wa[i]) != math.Float32bits(wb[i]) {
				t.Fatalf("%s: restored run differs at %d: %g vs %g", tc.name, i, wb[i], wa[i])
			}
		}
		if a.State().Steps != b.State().Steps {
			t.Errorf("%s: steps %d after restore, want %d", tc.name, b.State().Steps, a.State().Steps)
		}
		bad := State{Steps: 1, Slots: []Slot{{"nope", make([]float32, n)}}}
		if err := b.SetState(bad); err == nil {
			t.Errorf("%s: SetState with a wrong slot: no error", tc.name)
		}
		if err := b.SetState(State{Steps: -1, Slots: saved.Slots}); err == nil {
			t.Errorf("%s: SetState with negative steps: no error", tc.name)
		}
		if err := b.Step(wb[:n-1], g2, 0.1); err == nil {
			t.Errorf("%s: Step with a short w: no error", tc.name)
		}
		if err := b.Step(wb, g2, float32(math.NaN())); err == nil {
			t.Errorf("%s: Step with a NaN rate: no error", tc.name)
		}
		if b.Name() == "" {
			t.Errorf("%s: empty Name", tc.name)
		}
	}
}

func TestOptimizersLarge(t *testing.T) {
	const n = 3*optGrain + 11 // split over goroutines
	rng := rand.New(rand.NewPCG(27, 28))
	w0, g := randNorm(rng, n, 1), randNorm(rng, n, 1)
	w := append([]float32(nil), w0...)
	o := NewAdam(n, 0.9, 0.999, 1e-8)
	if err := o.Step(w, g, 0.01); err != nil {
		t.Fatal(err)
	}
	st := map[string][]float64{"m": make([]float64, n), "v": make([]float64, n)}
	w64 := to64(w0)
	adam64(w64, to64(g), st, 1, 0.01, 0)
	closeTo(t, "adam large", w, w64, 1e-5, 1e-6)
}

// torchOptim is testdata/torch_optim.json, written by gen_torch_optim.py.
type torchOptim struct {
	W0    []float32   `json:"w0"`
	Grads [][]float32 `json:"grads"`
	Cases []struct {
		Name       string             `json:"name"`
		Params     map[string]float32 `json:"params"`
		Trajectory [][]float64        `json:"trajectory"`
	} `json:"cases"`
}

func TestOptimizersAgainstTorch(t *testing.T) {
	data, err := os.ReadFile("testdata/torch_optim.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref torchOptim
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != 7 {
		t.Fatalf("%d torch cases, want 7", len(ref.Cases))
	}
	n := len(ref.W0)
	for _, c := range ref.Cases {
		p := c.Params
		var o Optimizer
		switch c.Name {
		case "sgd":
			o = NewSGD(n)
		case "momentum", "nesterov":
			o = NewMomentum(n, p["beta"], c.Name == "nesterov")
		case "adagrad":
			o = NewAdaGrad(n, p["eps"])
		case "rmsprop":
			o = NewRMSProp(n, p["rho"], p["eps"])
		case "adam":
			o = NewAdam(n, p["beta1"], p["beta2"], p["eps"])
		case "adamw":
			o = NewAdamW(n, p["beta1"], p["beta2"], p["eps"], p["weight_decay"])
		default:
			t.Fatalf("unknown torch case %q", c.Name)
		}
		w := append([]float32(nil), ref.W0...)
		for s, g := range ref.Grads {
			if err := o.Step(w, g, p["lr"]); err != nil {
				t.Fatal(err)
			}
			closeTo(t, c.Name, w, c.Trajectory[s], 1e-5, 1e-6)
		}
	}
}

func TestSchedules(t *testing.T) {
	near := func(name string, got float32, want float64) {
		t.Helper()
		if math.Abs(float64(got)-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	near("constant", Constant{0.3}.LR(99), 0.3)
	sd := StepDecay{Base: 1, Gamma: 0.5, Every: 10}
	near("step 0", sd.LR(0), 1)
	near("step 9", sd.LR(9), 1)
	near("step 10", sd.LR(10), 0.5)
	near("step 25", sd.LR(25), 0.25)
	near("step, no period", StepDecay{Base: 2, Gamma: 0.5}.LR(50), 2)
	near("exp 3", Exponential{Base: 2, Gamma: 0.9}.LR(3), 2*0.729)
	cs := Cosine{Base: 1, Floor: 0.1, Steps: 100}
	near("cos 0", cs.LR(0), 1)
	near("cos 50", cs.LR(50), 0.55)
	near("cos 25", cs.LR(25), 0.1+0.9*(1+math.Cos(math.Pi/4))/2)
	near("cos 100", cs.LR(100), 0.1)
	near("cos 500", cs.LR(500), 0.1)
	wu := Warmup{Steps: 4, Then: cs}
	near("warm 0", wu.LR(0), 0.25)
	near("warm 3", wu.LR(3), 1)
	near("warm 4", wu.LR(4), 1)
	near("warm 54", wu.LR(54), 0.55)
	near("warm nil", Warmup{Steps: 3}.LR(1), 0)
	near("warm none", Warmup{Then: Constant{0.2}}.LR(0), 0.2)
}
