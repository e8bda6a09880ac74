package scripts

import (
	"math"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
)

// TestLMProbsTaken: attn_bwd with the softmax probabilities taken from attn_fwd gives every output bit
// of the attn_bwd that recomputes them, in both numerics.
func TestLMProbsTaken(t *testing.T) {
	for _, mode := range []emulator.Numerics{emulator.FP16, emulator.FP32} {
		res, _ := runScript(t, "testdata/lm_probs.star", nil, emulator.Options{Numerics: mode}, false)
		fits, ok := res.Globals["fits"]
		if !ok || fits.String() != "True" {
			t.Fatalf("mode %v: lm_probs_fit is %v at the test's sizes, want True", mode, fits)
		}
		a, b := tensorData(t, res.Globals["recomputed"]), tensorData(t, res.Globals["taken"])
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("mode %v: outputs of %d and %d elements", mode, len(a), len(b))
		}
		nonzero := 0
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("mode %v: element %d: recomputed %v, taken %v", mode, i, a[i], b[i])
			}
			if a[i] != 0 {
				nonzero++
			}
		}
		if nonzero < len(a)/2 {
			t.Fatalf("mode %v: only %d of %d outputs are non-zero", mode, nonzero, len(a))
		}
	}
}
