package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// activations64 holds each activation written from its definition in float64.
var activations64 = map[string]func(x float64) float64{
	"identity":   func(x float64) float64 { return x },
	"sigmoid":    func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
	"relu":       func(x float64) float64 { return math.Max(x, 0) },
	"leaky_relu": func(x float64) float64 { return math.Max(x, 0.01*x) },
	"tanh":       math.Tanh,
	"softsign":   func(x float64) float64 { return x / (1 + math.Abs(x)) },
	"silu":       func(x float64) float64 { return x / (1 + math.Exp(-x)) },
	"gelu":       func(x float64) float64 { return x * 0.5 * math.Erfc(-x/math.Sqrt2) },
	"gelu_tanh": func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	},
}

func TestActivations(t *testing.T) {
	var xs []float32
	for x := -8.0; x <= 8; x += 0.173 { // steps past 0 without landing on the kink
		xs = append(xs, float32(x))
	}
	xs = append(xs, 30, -30, 1e-3, -1e-3)
	for name, f64 := range activations64 {
		a, err := ActivationNamed(name, 0.01)
		if err != nil {
			t.Fatal(err)
		}
		if a.Name() != name {
			t.Errorf("ActivationNamed(%q).Name() = %q", name, a.Name())
		}
		y := make([]float32, len(xs))
		if err := a.Forward(y, xs); err != nil {
			t.Fatal(err)
		}
		dy := make([]float32, len(xs))
		for i := range dy {
			dy[i] = float32(i%5) - 1.5
		}
		dx := make([]float32, len(xs))
		if err := a.Backward(dx, dy, xs); err != nil {
			t.Fatal(err)
		}
		for i, x := range xs {
			want := f64(float64(x))
			if d := math.Abs(float64(y[i]) - want); d > 1e-6*math.Max(1, math.Abs(want)) {
				t.Errorf("%s(%g) = %g, want %g", name, x, y[i], want)
			}
			h := 1e-6
			fd := (f64(float64(x)+h) - f64(float64(x)-h)) / (2 * h)
			wantDx := float64(dy[i]) * fd
			if d := math.Abs(float64(dx[i]) - wantDx); d > 1e-5*math.Max(1, math.Abs(wantDx)) {
				t.Errorf("%s'(%g)*%g = %g, finite difference %g", name, x, dy[i], dx[i], wantDx)
			}
			if a.Apply(x) != y[i] || a.Derivative(x)*dy[i] != dx[i] {
				t.Errorf("%s: scalar and slice forms differ at %g", name, x)
			}
		}
	}
}

func TestActivationSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	x := randNorm(rng, 3*elemGrain+7, 2) // split over goroutines
	y := make([]float32, len(x))
	if err := SiLU.Forward(y, x); err != nil {
		t.Fatal(err)
	}
	in := append([]float32(nil), x...)
	if err := SiLU.Forward(in, in); err != nil { // in place
		t.Fatal(err)
	}
	for i, v := range x {
		if y[i] != silu(v) || in[i] != y[i] {
			t.Fatalf("SiLU.Forward[%d] = %g (in place %g), want %g", i, y[i], in[i], silu(v))
		}
	}
	if err := SiLU.Forward(y[:3], x); err == nil {
		t.Error("short y: no error")
	}
	if err := SiLU.Backward(y, y[:3], x); err == nil {
		t.Error("short dy: no error")
	}
	if err := (Activation{}).Forward(y, x); err == nil {
		t.Error("zero Activation: no error")
	}
	if _, err := ActivationNamed("swishy", 0); err == nil {
		t.Error("unknown name: no error")
	}
}

func softmax64(x []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, v)
	}
	y := make([]float64, len(x))
	var s float64
	for i, v := range x {
		y[i] = math.Exp(v - m)
		s += y[i]
	}
	for i := range y {
		y[i] /= s
	}
	return y
}

func TestSoftmax(t *testing.T) {
	const rows, cols = 4, 7
	rng := rand.New(rand.NewPCG(19, 20))
	x, dy := randNorm(rng, rows*cols, 3), randNorm(rng, rows*cols, 1)
	x[3] = 500 // would overflow exp without the max shift
	y := make([]float32, rows*cols)
	if err := Softmax(y, x, rows, cols); err != nil {
		t.Fatal(err)
	}
	x64 := to64(x)
	var want []float64
	for r := range rows {
		want = append(want, softmax64(x64[r*cols:(r+1)*cols])...)
	}
	closeTo(t, "softmax", y, want, 1e-6, 1e-7)

	dx := make([]float32, rows*cols)
	if err := SoftmaxBackward(dx, dy, y, rows, cols); err != nil {
		t.Fatal(err)
	}
	x[3] = 1 // keep the finite-difference check well conditioned
	x64 = to64(x)
	if err := Softmax(y, x, rows, cols); err != nil {
		t.Fatal(err)
	}
	if err := SoftmaxBackward(dx, dy, y, rows, cols); err != nil {
		t.Fatal(err)
	}
	loss := func(v []float64) float64 {
		var l float64
		for r := range rows {
			for j, p := range softmax64(v[r*cols : (r+1)*cols]) {
				l += p * float64(dy[r*cols+j])
			}
		}
		return l
	}
	closeTo(t, "softmax backward", dx, numGrad(loss, x64), 1e-5, 1e-6)

	if err := Softmax(y, x, rows, 0); err == nil {
		t.Error("cols = 0: no error")
	}
	if err := SoftmaxBackward(dx, dy[:5], y, rows, cols); err == nil {
		t.Error("short dy: no error")
	}
}
