package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestLosses(t *testing.T) {
	const rows, cols = 3, 5
	rng := rand.New(rand.NewPCG(21, 22))
	pred, logits := randNorm(rng, rows*cols, 1), randNorm(rng, rows*cols, 2)
	target := make([]float32, rows*cols) // soft distributions per row
	probs := make([]float32, rows*cols)  // valid probabilities per row
	bin := make([]float32, rows*cols)    // binary probabilities and targets
	bint := make([]float32, rows*cols)
	for r := range rows {
		var s, sp float64
		for j := range cols {
			target[r*cols+j] = rng.Float32() + 0.1
			probs[r*cols+j] = rng.Float32() + 0.1
			s += float64(target[r*cols+j])
			sp += float64(probs[r*cols+j])
		}
		for j := range cols {
			target[r*cols+j] = float32(float64(target[r*cols+j]) / s)
			probs[r*cols+j] = float32(float64(probs[r*cols+j]) / sp)
		}
	}
	for i := range bin {
		bin[i] = 0.05 + 0.9*rng.Float32()
		bint[i] = rng.Float32()
	}
	t64 := to64(target)
	labels := []int{4, 0, 2}
	onehot := make([]float64, rows*cols)
	for r, l := range labels {
		onehot[r*cols+l] = 1
	}

	cases := []struct {
		name string
		x    []float32
		loss func(x []float64) float64 // float64 definition
		run  func(grad []float32) (float32, error)
	}{
		{"MSE", pred, func(x []float64) float64 {
			var s float64
			for i, v := range x {
				s += (v - t64[i]) * (v - t64[i])
			}
			return s / float64(len(x))
		}, func(g []float32) (float32, error) { return MSE(g, pred, target) }},
		{"CrossEntropyLogits", logits, func(x []float64) float64 {
			var s float64
			for r := range rows {
				p := softmax64(x[r*cols : (r+1)*cols])
				for j := range cols {
					s -= t64[r*cols+j] * math.Log(p[j])
				}
			}
			return s / rows
		}, func(g []float32) (float32, error) { return CrossEntropyLogits(g, logits, target, rows, cols) }},
		{"CrossEntropyLabels", logits, func(x []float64) float64 {
			var s float64
			for r := range rows {
				p := softmax64(x[r*cols : (r+1)*cols])
				for j := range cols {
					s -= onehot[r*cols+j] * math.Log(p[j])
				}
			}
			return s / rows
		}, func(g []float32) (float32, error) { return CrossEntropyLabels(g, logits, labels, rows, cols) }},
		{"CrossEntropyProbs", probs, func(x []float64) float64 {
			var s float64
			for i, v := range x {
				s -= t64[i] * math.Log(v)
			}
			return s / rows
		}, func(g []float32) (float32, error) { return CrossEntropyProbs(g, probs, target, rows, cols) }},
		{"BinaryCrossEntropy", bin, func(x []float64) float64 {
			var s float64
			for i, p := range x {
				tt := float64(bint[i])
				s -= tt*math.Log(p) + (1-tt)*math.Log(1-p)
			}
			return s / float64(len(x))
		}, func(g []float32) (float32, error) { return BinaryCrossEntropy(g, bin, bint) }},
		{"BinaryCrossEntropyLogits", logits, func(x []float64) float64 {
			var s float64
			for i, z := range x {
				p := 1 / (1 + math.Exp(-z))
				tt := float64(bint[i])
				s -= tt*math.Log(p) + (1-tt)*math.Log(1-p)
			}
			return s / float64(len(x))
		}, func(g []float32) (float32, error) { return BinaryCrossEntropyLogits(g, logits, bint) }},
	}
	for _, tc := range cases {
		grad := make([]float32, len(tc.x))
		got, err := tc.run(grad)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		x64 := to64(tc.x)
		if want := tc.loss(x64); math.Abs(float64(got)-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %g, want %g", tc.name, got, want)
		}
		closeTo(t, tc.name+" grad", grad, numGrad(tc.loss, x64), 1e-5, 1e-6)
		if again, err := tc.run(nil); err != nil || again != got {
			t.Errorf("%s without grad = %g, %v; want %g", tc.name, again, err, got)
		}
	}
}

func TestLossStability(t *testing.T) {
	logits := []float32{1000, -1000, 0, 3000}
	target := []float32{1, 0, 0, 1}
	grad := make([]float32, 4)
	l, err := CrossEntropyLogits(grad, logits, target, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	// Row 0: log-softmax of the target is ~0; row 1: 3000 - lse = ~0.
	if l != 0 || grad[0] != 0 || grad[1] != 0 {
		t.Errorf("huge logits: loss %g grad %v, want 0 and zeros", l, grad)
	}
	l, err = BinaryCrossEntropyLogits(grad[:2], []float32{-200, 200}, []float32{1, 0})
	if err != nil || math.Abs(float64(l)-200) > 1e-3 {
		t.Errorf("BCE logits at +-200 = %g, %v; want 200", l, err)
	}
	l, err = BinaryCrossEntropy(grad[:2], []float32{0, 1}, []float32{1, 0})
	if err != nil || math.IsInf(float64(l), 0) || math.IsNaN(float64(l)) {
		t.Errorf("BCE at p = 0, 1 = %g, %v; want finite", l, err)
	}
	l, err = CrossEntropyProbs(grad[:2], []float32{0, 1}, []float32{1, 0}, 1, 2)
	if err != nil || math.IsInf(float64(l), 0) {
		t.Errorf("CrossEntropyProbs at p = 0: %g, %v; want finite", l, err)
	}
}

func TestLossErrors(t *testing.T) {
	s := make([]float32, 6)
	if _, err := MSE(nil, s, s[:5]); err == nil {
		t.Error("MSE short target: no error")
	}
	if _, err := MSE(nil, nil, nil); err == nil {
		t.Error("MSE empty: no error")
	}
	if _, err := MSE(s[:2], s, s); err == nil {
		t.Error("MSE short grad: no error")
	}
	if _, err := CrossEntropyLogits(nil, s, s, 2, 4); err == nil {
		t.Error("CrossEntropyLogits short logits: no error")
	}
	if _, err := CrossEntropyLabels(nil, s, []int{0, 3}, 2, 3); err == nil {
		t.Error("CrossEntropyLabels label out of range: no error")
	}
	if _, err := CrossEntropyLabels(nil, s, []int{0}, 2, 3); err == nil {
		t.Error("CrossEntropyLabels short labels: no error")
	}
	if _, err := CrossEntropyProbs(s[:1], s, s, 2, 3); err == nil {
		t.Error("CrossEntropyProbs short grad: no error")
	}
	if _, err := BinaryCrossEntropy(nil, s, s[:1]); err == nil {
		t.Error("BinaryCrossEntropy short target: no error")
	}
}
