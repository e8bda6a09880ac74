package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A folder of token files (llama2.c's shards) trains as the one file they are cut from: the same
// ids in the same order, so the same random windows and the same losses; val_data may be a folder too.
// A folder without a token file, and an id beyond the vocabulary in one shard, are refused naming it.
func TestTrainLMShards(t *testing.T) {
	toks, err := os.ReadFile("testdata/lm_ref/tokens.bin")
	if err != nil {
		t.Fatal(err)
	}
	dir, val := t.TempDir(), t.TempDir()
	cut := 2 * (len(toks) / 2 * 9 / 10) // the split val_frac 0.1 makes
	train := toks[:cut]
	for i, r := range [][2]int{{0, 1000}, {1000, 1002}, {1002, len(train)}} {
		if err := os.WriteFile(filepath.Join(dir, "data0"+string(rune('0'+i))+".bin"), train[r[0]:r[1]], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(val, "val.bin"), toks[cut:], 0o644); err != nil {
		t.Fatal(err)
	}
	losses := func(out string) []string {
		var l []string
		for _, m := range regexp.MustCompile(`(?m)^step (\d+)/\d+ +loss (\S+)|^step \d+ val_loss (\S+)`).FindAllStringSubmatch(out, -1) {
			l = append(l, m[0])
		}
		return l
	}
	p := lmSmall(t.TempDir(), "ckpt", `""`, "best", `""`)
	_, whole := mustRunLM(t, p, false)
	p["data"], p["val_data"] = quote(dir), quote(val)
	_, sharded := mustRunLM(t, p, false)
	if a, b := losses(whole), losses(sharded); len(a) < 3 || !slices.Equal(a, b) {
		t.Errorf("one file: %v\nthree shards: %v", a, b)
	}
	if !strings.Contains(sharded, "train 3600 tokens, validation 400 tokens") {
		t.Errorf("the shards' sizes:\n%s", sharded)
	}
	empty := t.TempDir()
	p["data"] = quote(empty)
	if _, _, err := runLM(t, p, false); err == nil || !strings.Contains(err.Error(), "holds no .bin token file") {
		t.Errorf("a folder without token files: %v", err)
	}
	p["data"], p["vocab"] = quote(dir), "100"
	if _, _, err := runLM(t, p, false); err == nil || !strings.Contains(err.Error(), "try --set vocab=") {
		t.Errorf("ids beyond the vocabulary: %v", err)
	}
}
