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
	for _, o := range []struct{ pairs, apart string }{{"xo_pairs", "xo_apart"}, {"kv_pairs", "kv_apart"}} {
		a, b := tensorData(t, res.Globals[o.pairs]), tensorData(t, res.Globals[o.apart])
		if len(a) != len(b) || len(a) == 0 {
			t.Fatalf("%s: %d values, %s: %d", o.pairs, len(a), o.apart, len(b))
		}
		const cols = 32 // the outputs' width; column 0 is the token's
		nonzero := 0
		for i := range a {
			if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
				t.Fatalf("%s[%d] = %v, %s[%d] = %v", o.pairs, i, a[i], o.apart, i, b[i])
			}
			if i%cols == 0 && a[i] != 0 {
				nonzero++
			}
		}
		if rows := len(a) / cols; nonzero < rows*7/8 {
			t.Errorf("%s: only %d of the token's %d values are not 0", o.pairs, nonzero, rows)
		}
	}
}
