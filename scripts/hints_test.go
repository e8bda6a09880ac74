package scripts

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/anestar/anestar/builtins"
)

// TestSizeHintsCheck: for random sizes, a script whose size check fails names a --set that fixes it;
// taking every hint in turn (at most four), the check passes: a hint is never refused in its turn.
func TestSizeHintsCheck(t *testing.T) {
	hint := regexp.MustCompile(`--set (\w+)=(\d+)`)
	r := rand.New(rand.NewPCG(3, 4))
	for _, script := range []string{trainLayer, "dynamic.star", "train_lm.star"} {
		for i := range 12 {
			p := map[string]string{"heads": fmt.Sprint(1 + r.IntN(8)), "seq": fmt.Sprint(8 + r.IntN(120)), "hidden": fmt.Sprint(8 + r.IntN(120)),
				"dim": fmt.Sprint(8 + r.IntN(120)), "steps": "1", "ckpt": `""`, "metrics": `""`}
			if script == "train_lm.star" {
				p["kv_heads"] = p["heads"]
				p["data"] = quote("testdata/lm_ref/tokens.bin")
				p["vocab"] = "300"
			}
			start := fmt.Sprint(p)
			for turn := 0; ; turn++ {
				_, err := builtins.Run(context.Background(), builtins.Config{Script: script, BackendName: "emulator", Params: p, DryRun: true})
				if err == nil {
					break
				}
				m := hint.FindStringSubmatch(err.Error())
				if m == nil || turn == 4 {
					t.Fatalf("%s %d, from %s: after %d hints: %v", script, i, start, turn, err)
				}
				if strings.Contains(err.Error(), "must be positive") || strings.Contains(err.Error(), "at least 1") {
					t.Fatalf("%s: a size of the test was not positive: %v", script, err)
				}
				p[m[1]] = m[2]
				if m[1] == "heads" && script == "train_lm.star" {
					p["kv_heads"] = m[2]
				}
			}
		}
	}
}
