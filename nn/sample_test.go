package nn

import (
	"math"
	"testing"
)

// TestSampleLogits checks picks against probabilities 0.1, 0.2, 0.3, 0.4 worked out by hand.
func TestSampleLogits(t *testing.T) {
	logits := []float32{0, float32(math.Log(2)), float32(math.Log(3)), float32(math.Log(4))}
	for _, c := range []struct {
		temp, topP, u float64
		want          int
	}{
		{0, 1, 0, 3},       // greedy
		{1, 1, 0.05, 0},    // cumulative 0.1, 0.3, 0.6, 1.0
		{1, 1, 0.25, 1},    //
		{1, 1, 0.65, 3},    //
		{1, 0.65, 0.5, 3},  // nucleus {3, 2}, mass 0.7: u*0.7 = 0.35 < 0.4
		{1, 0.65, 0.6, 2},  // 0.42 > 0.4
		{1, 0.35, 0.99, 3}, // nucleus {3}
		{1e-3, 1, 0.999, 3},
	} {
		got, err := SampleLogits(logits, nil, c.temp, c.topP, c.u)
		if err != nil || got != c.want {
			t.Errorf("temperature %g, top_p %g, u %g: %d, %v; want %d", c.temp, c.topP, c.u, got, err, c.want)
		}
	}
	for _, bad := range [][3]float64{{-1, 1, 0}, {1, 0, 0}, {1, 1.5, 0}, {1, 1, 2}} {
		if _, err := SampleLogits(logits, nil, bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, err := SampleLogits(nil, nil, 1, 1, 0); err == nil {
		t.Error("no logits: no error")
	}
}
