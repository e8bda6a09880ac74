package emulator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/fastexp"
)

// softmaxRowPlain is softmaxRow as the plain formula: every exponential computed, summed in order.
func softmaxRowPlain(row []float32) []float32 {
	m := float32(math.Inf(-1))
	for _, v := range row {
		if v > m {
			m = v
		}
	}
	out := make([]float32, len(row))
	var s float32
	for i, v := range row {
		out[i] = fastexp.Exp32(v - m)
		s += out[i]
	}
	inv := 1 / s
	for i := range out {
		out[i] *= inv
	}
	return out
}

// softmaxRow, which skips the exponentials of entries far below the row's maximum, gives the plain
// formula's bits on rows masked in runs and at random, with entries at the margin's edge, -inf, +inf
// and NaN among them; in place too.
func TestSoftmaxRowSkipsOnlyExactZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	inf := float32(math.Inf(1))
	skipped := 0
	for trial := 0; trial < 3000; trial++ {
		n := 1 + rng.IntN(600)
		row := make([]float32, n)
		for i := range row {
			row[i] = float32(rng.NormFloat64() * 4)
		}
		m := float32(math.Inf(-1))
		for _, v := range row {
			m = max(m, v)
		}
		masked := []float32{-65504, float32(math.Inf(-1)), -1e30, m - 104.001, m - 104, m - 103.99, m - 103.9, m - 90}
		switch trial % 4 {
		case 0: // a run of kept entries, one kept entry after a masked run (the decoder's cache and new column)
			lo, hi := rng.IntN(n), rng.IntN(n)
			for i := range row {
				if (i < lo || i > hi) && i != n-1 {
					row[i] = masked[rng.IntN(3)]
				}
			}
		case 1: // masked at random, values of every kind
			for i := range row {
				if rng.IntN(2) == 0 {
					row[i] = masked[rng.IntN(len(masked))]
				}
			}
		case 2: // a few specials
			for k := rng.IntN(3); k >= 0; k-- {
				row[rng.IntN(n)] = []float32{inf, -inf, float32(math.NaN()), -65504}[rng.IntN(4)]
			}
		case 3: // every entry masked
			for i := range row {
				row[i] = masked[rng.IntN(2)]
			}
		}
		want := softmaxRowPlain(row)
		got := make([]float32, n)
		softmaxRow(got, row)
		inPlace := append([]float32(nil), row...)
		softmaxRow(inPlace, inPlace)
		for i := range want {
			for _, g := range []float32{got[i], inPlace[i]} {
				if math.Float32bits(g) != math.Float32bits(want[i]) && !(g != g && want[i] != want[i]) {
					t.Fatalf("trial %d, n %d, entry %d of %v: got %v, want %v", trial, n, i, row[i], g, want[i])
				}
			}
		}
		lo, hi := inf, -inf
		for _, v := range row {
			lo, hi = min(lo, v), max(hi, v)
		}
		if lo-hi < -expZeroMargin {
			skipped++
		}
	}
	if skipped < 1000 {
		t.Fatalf("only %d of 3000 rows took the skipping path", skipped)
	}
}

// softmaxRows4, four rows' sums in step, gives softmaxRow's bits row by row, on rows of the kinds
// above side by side (one masked in runs, one at random, one with specials, one all masked), in place too.
func TestSoftmaxRows4(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 500; trial++ {
		n := 1 + rng.IntN(300)
		x := make([]float32, 4*n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * 4)
		}
		for i := 0; i < n; i++ {
			if i > n/2 && i != n-1 {
				x[i] = -65504 // row 0: a kept prefix, a masked run, the last kept
			}
			if rng.IntN(2) == 0 {
				x[n+i] = []float32{-65504, float32(math.Inf(-1)), x[n+i] - 200}[rng.IntN(3)] // row 1: masked at random
			}
			x[3*n+i] = -65504 // row 3: all masked
		}
		x[2*n+rng.IntN(n)] = []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}[rng.IntN(3)] // row 2
		want := make([]float32, 4*n)
		for r := range 4 {
			softmaxRow(want[r*n:(r+1)*n], x[r*n:(r+1)*n])
		}
		got := make([]float32, 4*n)
		softmaxRows4(got, x, n)
		inPlace := append([]float32(nil), x...)
		softmaxRows4(inPlace, inPlace, n)
		for i := range want {
			for _, g := range []float32{got[i], inPlace[i]} {
				if math.Float32bits(g) != math.Float32bits(want[i]) && !(g != g && want[i] != want[i]) {
					t.Fatalf("trial %d, n %d, row %d, entry %d: %v, want %v", trial, n, i/n, i%n, g, want[i])
				}
			}
		}
	}
}
