package scripts

import (
	"math"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/internal/numtest"
)

// TestDecodePairsSameBits: the token step's RoPE on paired rows (lm_decode.star's _attention with
// pairs: qk cos + swapped(qk) sin, the swapped rows a product of their own) gives the bits of nn_rope's
// pairs taken apart, in fp16 numerics, at a position with cached keys on both sides of the mask's edge.
// Exact under the fixed-order gemm, where a row's dot product does not depend on the rows beside it.
func TestDecodePairsSameBits(t *testing.T) {
	numtest.FixedOrderGemm(t)
	res, _ := runScript(t, "testdata/dec_pairs.star", nil, emulator.Options{Numerics: emulator.FP16}, false)
	a, b := tensorData(t, res.Globals["y_pairs"]), tensorData(t, res.Globals["y_apart"])
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("y_pairs: %d values, y_apart: %d", len(a), len(b))
	}
	nonzero := 0
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("y_pairs[%d] = %v, y_apart[%d] = %v", i, a[i], i, b[i])
		}
		if a[i] != 0 {
			nonzero++
		}
	}
	if nonzero < len(a)*7/8 { // the output is the token's column alone: xo, then the new keys and values
		t.Errorf("y: only %d of the token's %d values are not 0", nonzero, len(a))
	}
}
