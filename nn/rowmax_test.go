package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// rowMax is the sequential max over the elements, NaN and signed zeros included, at every length
// around the blocks of eight.
func TestRowMaxIsSequentialMax(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0}
	for n := 1; n <= 40; n++ {
		for trial := range 50 {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			if trial%2 == 1 {
				x[rng.IntN(n)] = special[trial/2%len(special)]
			}
			want := x[0]
			for _, v := range x[1:] {
				want = max(want, v)
			}
			got := rowMax(x)
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("n %d: rowMax(%v) = %v, sequential max %v", n, x, got, want)
			}
		}
	}
}

func BenchmarkRowMax(b *testing.B) {
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(i%97) - 40
	}
	b.Run("rowMax", func(b *testing.B) {
		for b.Loop() {
			rowMax(x)
		}
	})
	b.Run("sequential", func(b *testing.B) {
		for b.Loop() {
			m := x[0]
			for _, v := range x[1:] {
				m = max(m, v)
			}
			sink32 = m
		}
	})
}

var sink32 float32
