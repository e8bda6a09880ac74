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
