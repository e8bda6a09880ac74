package scripts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
)

// metricsLines reads a metrics file as records of step and kind ("val" for a validation line, else
// "train").
func metricsLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		kind := "train"
		if _, ok := rec["val_loss"]; ok {
			kind = "val"
		}
		out = append(out, kind+" "+strings.TrimSpace(string(mustJSON(rec["step"]))))
	}
	return out
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// appendKilledLines adds the lines a run killed after its checkpoint wrote: the resumed run redoes those steps.
func appendKilledLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// A metrics record's step is the steps done, the counter the checkpoint records: a resume keeps every
// record up to and including the checkpoint's step (train_lm's validation line at that step too) and
// drops the later ones a killed run wrote, so the file holds every step once, for each shipped script
// that resumes. eval_only leaves the file as it is.
func TestResumeKeepsCheckpointStepRecords(t *testing.T) {
	t.Run("train_lm", func(t *testing.T) {
		dir := t.TempDir()
		p := lmSmall(dir, "steps", "3", "ckpt_every", "3")
		mustRunLM(t, p, false)
		mpath := filepath.Join(dir, "lm.jsonl")
		appendKilledLines(t, mpath, `{"step":4,"loss":9}`, `{"step":5,"loss":9}`)
		p["steps"] = "6"
		mustRunLM(t, p, true)
		want := []string{"train 1", "train 2", "train 3", "val 3", "train 4", "train 5", "train 6", "val 6"}
		if got := metricsLines(t, mpath); !slices.Equal(got, want) {
			t.Fatalf("after resume the metrics hold %v, want %v", got, want)
		}
		before, _ := os.ReadFile(mpath)
		p["eval_only"] = "True"
		_, out := mustRunLM(t, p, false)
		if after, _ := os.ReadFile(mpath); string(after) != string(before) {
			t.Errorf("eval_only changed the metrics file: %d bytes before, %d after\n%s", len(before), len(after), out)
		}
		if !strings.Contains(out, "val_loss") {
			t.Errorf("eval_only printed no validation loss:\n%s", out)
		}
	})
	for _, script := range []string{trainLayer, "dynamic.star"} {
		t.Run(script, func(t *testing.T) {
			dir := t.TempDir()
			mpath := filepath.Join(dir, "m.jsonl")
			p := with("steps", "7", "accum", "7", "ckpt", quote(filepath.Join(dir, "c.safetensors")), "metrics", quote(mpath))
			runScript(t, script, p, emulator.Options{}, false)
			appendKilledLines(t, mpath, `{"step":8,"loss":9}`)
			p["steps"] = "14"
			runScript(t, script, p, emulator.Options{}, true)
			var want []string
			for i := 1; i <= 14; i++ {
				want = append(want, "train "+strings.TrimSpace(string(mustJSON(i))))
			}
			if got := metricsLines(t, mpath); !slices.Equal(got, want) {
				t.Fatalf("after resume the metrics hold %v, want %v", got, want)
			}
		})
	}
}
