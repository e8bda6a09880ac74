package bench

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// TestLMKernels runs lm_kernels.star at a small size and checks that it times each kernel and the
// four together.
func TestLMKernels(t *testing.T) {
	var out bytes.Buffer
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script:  "lm_kernels.star",
		Backend: emulator.New(emulator.Options{}),
		Params:  map[string]string{"dim": "32", "heads": "4", "kv_heads": "2", "hidden": "64", "seq": "32", "nseq": "2", "rounds": "3"},
		Stdout:  &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	lines := regexp.MustCompile(`(?m)^(attn_fwd|ffn_fwd|ffn_bwd|attn_bwd|all four): fastest \d+\.\d\d ms, median \d+\.\d\d ms$`).FindAllString(out.String(), -1)
	if len(lines) != 5 {
		t.Errorf("want 5 timed lines, got:\n%s", out.String())
	}
}
