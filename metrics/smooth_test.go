package metrics

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestMovingAverageHand(t *testing.T) {
	ys := []float64{1, 2, 3, 4, 10}
	cases := []struct {
		span int
		want []float64
	}{
		{0, ys},
		{1, ys},
		{2, []float64{1.5, 2, 3, 17.0 / 3, 7}}, // span 2 has half-width 1, like span 3
		{3, []float64{1.5, 2, 3, 17.0 / 3, 7}},
		{5, []float64{2, 2.5, 4, 19.0 / 4, 17.0 / 3}},
		{99, []float64{4, 4, 4, 4, 4}},
	}
	for _, c := range cases {
		got := MovingAverage(ys, c.span)
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-15 {
				t.Errorf("span %d: got %v, want %v", c.span, got, c.want)
				break
			}
		}
	}
	if got := MovingAverage(nil, 5); len(got) != 0 {
		t.Errorf("empty input gave %v", got)
	}
}

// TestMovingAverageDirect compares the sliding sum against summing each window
// afresh, over a series whose values span twelve orders of magnitude.
func TestMovingAverageDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ys := make([]float64, 3000)
	for i := range ys {
		ys[i] = math.Exp(-float64(i)/100) * (1 + 0.3*r.Float64()) * 1e3
	}
	for _, span := range []int{3, 10, 41, 501} {
		got := MovingAverage(ys, span)
		h := span / 2
		for i := range ys {
			lo, hi := max(0, i-h), min(len(ys), i+h+1)
			sum := 0.0
			for _, y := range ys[lo:hi] {
				sum += y
			}
			want := sum / float64(hi-lo)
			if math.Abs(got[i]-want) > 1e-9*want {
				t.Fatalf("span %d, i %d: got %g, want %g", span, i, got[i], want)
			}
		}
	}
}

func TestDefaultSpan(t *testing.T) {
	var got []int
	for _, n := range []int{0, 10, 49, 50, 75, 100, 1000, 10000} {
		got = append(got, DefaultSpan(n))
	}
	if want := []int{1, 1, 1, 3, 3, 5, 41, 401}; !reflect.DeepEqual(got, want) {
		t.Errorf("DefaultSpan = %v, want %v", got, want)
	}
}
