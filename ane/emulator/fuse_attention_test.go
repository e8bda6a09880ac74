package emulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/refkernels"
)

// With row blocks smaller than the sequence, each head's product is computed block by block up to the
// block's longest kept prefix (and in full for the rows that fall back): the fused chain still gives
// the separate ops' bits, whether the block size divides the rows or not.
func TestFusedAttentionRowBlocks(t *testing.T) {
	old := attnRowBlock
	defer func() { attnRowBlock = old }()
	for _, blk := range []int{1, 4, 5, 16} {
		attnRowBlock = blk
		t.Run(fmt.Sprint(blk), func(t *testing.T) {
			TestFusedKernelsExact(t)
			TestFusedAttentionFallbackRows(t)
		})
	}
}

// The exactness checks can fail: a deliberately wrong rewrite of the causal attention chain — one row
// block skipped (the fused step's results for the second block of rows of head 0 never written) — is
// caught by the fixed-order comparison with the separate ops.
func TestExactnessChecksCatchWrongRewrites(t *testing.T) {
	fixedOrderGemm(t)
	old := attnRowBlock
	defer func() { attnRowBlock = old }()
	c := refkernels.Config{Dim: 32, Hidden: 16, Heads: 4, Seq: 24}
	rng := rand.New(rand.NewPCG(21, 22))
	rk, err := refkernels.SDPABwd1(c, randInput(rng, c.Dim*c.Dim, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range numerics {
		attnRowBlock = 4
		fused, plain := compileBoth(t, rk, Options{Numerics: mode.n, Relaxed: true})
		x := randInput(rng, fused.Inputs()[0].Channels()*fused.Inputs()[0].Spatial(), 3)
		want := evalOne(t, plain, x)
		if bad, _ := diffBits(evalOne(t, fused, x), want); bad != 0 {
			t.Fatalf("%s: the correct rewrite differs in %d elements", mode.name, bad)
		}

		i := fusedAttentionStep(t, fused)
		st := &fused.steps[i]
		run, out := st.run, st.outs[0].data
		st.run = func() error {
			err := run()
			clear(out[4*c.Seq : 8*c.Seq]) // head 0, rows 4..7: the second row block
			return err
		}
		if bad, _ := diffBits(evalOne(t, fused, x), want); bad == 0 {
			t.Errorf("%s: a skipped row block went unnoticed", mode.name)
		}
	}
}

// fusedAttentionStep returns the index of k's fused causal-attention step (a fused step ending in a
// softmax).
func fusedAttentionStep(t *testing.T, k *Kernel) int {
	t.Helper()
	for i, st := range k.steps {
		if st.fused && st.op != nil && st.op.Kind == "softmax" {
			return i
		}
	}
	for i, st := range k.steps {
		t.Logf("step %d: %s fused=%v", i, st.result, st.fused)
	}
	t.Fatal("no fused causal-attention step")
	return -1
}

// sumSquares' rows (four partial sums) and columns agree with the plain float64 sums in order within
// a few ulp, for lengths that are and are not multiples of four; a NaN makes its sum NaN.
func TestSumSquares(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, k := range []int{1, 3, 4, 7, 64, 65} {
		const rows, ld = 5, 70
		m := make([]float32, rows*ld)
		for i := range m {
			m[i] = float32(rng.NormFloat64() * 100)
		}
		got := make([]float64, rows)
		sumSquares(got, m, ld, k, false)
		for i := range rows {
			var want float64
			for _, v := range m[i*ld : i*ld+k] {
				want += float64(v) * float64(v)
			}
			if d := math.Abs(got[i] - want); d > 1e-14*want {
				t.Errorf("k %d, row %d: %g, want %g", k, i, got[i], want)
			}
		}
		cols := make([]float64, 4) // columns 0..3 of the first k rows of the [k, ld] matrix
		sumSquares(cols, m, ld, min(k, rows), true)
		for c := range cols {
			var want float64
			for r := range min(k, rows) {
				want += float64(m[r*ld+c]) * float64(m[r*ld+c])
			}
			if cols[c] != want {
				t.Errorf("k %d, column %d: %g, want %g", k, c, cols[c], want)
			}
		}
	}
	m := []float32{1, 2, float32(math.NaN()), 4, 5}
	s := make([]float64, 1)
	sumSquares(s, m, 5, 5, false)
	if !math.IsNaN(s[0]) {
		t.Errorf("a row holding NaN: %g, want NaN", s[0])
	}
}
