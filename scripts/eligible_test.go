package scripts

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/builtins"
)

// TestShippedKernelsEligible builds every kernel of every shipped script, at its defaults and at the
// sizes its tests use, in a dry run, and checks that the ANE is known to run each one: no part refused
// and none unknown (ane.Eligible). It logs the ops each script uses.
func TestShippedKernelsEligible(t *testing.T) {
	mlpSmall := map[string]string{"data": mlpData, "hidden": `"16"`, "epochs": "1"}
	for _, c := range []struct {
		script string
		sizes  map[string]map[string]string
	}{
		{trainLayer, map[string]map[string]string{"defaults": nil, "test sizes": small}},
		{"dynamic.star", map[string]map[string]string{"defaults": nil, "test sizes": dynSmall, "docs sizes": small}},
		{"mlp.star", map[string]map[string]string{"defaults": {"data": mlpData}, "test sizes": mlpSmall}},
		{"train_lm.star", map[string]map[string]string{"defaults": {"ckpt": `""`},
			"test sizes": lmSmall(t.TempDir())}},
		{"sample.star", map[string]map[string]string{"generator's model (hidden 172)": {
			"model": quote("../ckpt/testdata/llama2/tied.v0.bin"), "tokenizer": quote("../ckpt/testdata/llama2/tokenizer.bin")}}},
	} {
		ops := map[string]bool{}
		for name, params := range c.sizes {
			res, err := builtins.Run(context.Background(), builtins.Config{
				Script: c.script, BackendName: "emulator", Params: params, DryRun: true, Argv: []string{"check", c.script},
			})
			if err != nil {
				t.Fatalf("%s at %s: %v", c.script, name, err)
			}
			if len(res.Checked) == 0 {
				t.Fatalf("%s at %s: no kernel checked", c.script, name)
			}
			for _, k := range res.Checked {
				for _, f := range k.Verdict.Findings {
					if f.Support != ane.Proven {
						t.Errorf("%s at %s: kernel %s: %s [%s]: %s", c.script, name, k.Where(), f.Support, f.Rule, f)
					}
				}
				for _, op := range k.Verdict.Ops() {
					ops[op] = true
				}
			}
		}
		var list []string
		for op := range ops {
			list = append(list, op)
		}
		sort.Strings(list)
		for _, op := range list {
			if !slices.Contains(ane.ProvenOps(), op) {
				t.Errorf("%s uses %s, which is not a proven op", c.script, op)
			}
		}
		t.Logf("%s uses %d ops: %s", c.script, len(list), strings.Join(list, ", "))
	}
}

// TestSizeChecksBeforeCompile checks that a size that would give a kernel an I/O width the ANE refuses
// is an error of the script's size check, naming the parameter and the fix, before any kernel is built.
func TestSizeChecksBeforeCompile(t *testing.T) {
	for _, c := range []struct {
		script string
		params map[string]string
		want   string
	}{
		{trainLayer, with("seq", "16"), "seq = 16: the kernels' I/O widths are made of seq, and the ANE needs widths that are multiples of 32: set seq to a multiple of 32 (--set seq=32)"},
		{"dynamic.star", map[string]string{"dim": "48", "heads": "4", "hidden": "128", "seq": "48"}, "seq = 48: the kernels' I/O widths are made of seq"},
		{"mlp.star", map[string]string{"data": mlpData, "batch": "20"}, "batch = 20: the dense kernels' batch is their I/O width, and the ANE needs widths that are multiples of 32: set batch to a multiple of 32 (--set batch=32)"},
	} {
		res, err := builtins.Run(context.Background(), builtins.Config{
			Script: c.script, BackendName: "emulator", Params: c.params, DryRun: true, Argv: []string{"check", c.script},
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want one containing %q", c.script, c.params, err, c.want)
		}
		if res != nil && len(res.Checked) != 0 {
			t.Errorf("%s %v: %d kernels built before the size check failed", c.script, c.params, len(res.Checked))
		}
	}
}
