package bench

import (
	"regexp"
	"testing"
)

// TestLMKernels runs lm_kernels.star at a small size and checks that it times each kernel and the
// four together.
func TestLMKernels(t *testing.T) {
	out := runScript(t, "lm_kernels.star", map[string]string{"dim": "32", "heads": "4", "kv_heads": "2", "hidden": "64", "seq": "32", "nseq": "2", "rounds": "3"})
	lines := regexp.MustCompile(`(?m)^(attn_fwd|ffn_fwd|ffn_bwd|attn_bwd|all four): fastest \d+\.\d\d ms, median \d+\.\d\d ms$`).FindAllString(out, -1)
	if len(lines) != 5 {
		t.Errorf("want 5 timed lines, got:\n%s", out)
	}
}
