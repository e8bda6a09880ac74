package scripts

import (
	"context"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
)

// metricsLines reads a metrics file as records of step and kind ("val" for a validation line, else
// "train").
func metricsLines(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, rec := range readJSONL(t, path) {
		kind := "train"
		if _, ok := rec["val_loss"]; ok {
			kind = "val"
		}
		out = append(out, kind+" "+strings.TrimSpace(string(mustJSON(rec["step"]))))
	}
	return out
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// readJSONL reads a JSON-lines file (a metrics file) as one map per line.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		out = append(out, rec)
	}
	return out
}

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

// The garbage runs of a careless command line are refused before any step is logged: a model with a
// NaN weight (naming the tensor), lr -1, lr inf, weight_decay NaN.
func TestLMRefusesGarbageBeforeAnyStep(t *testing.T) {
	dir := t.TempDir()
	m, err := ckpt.ReadLlama2(filepath.Join(llama2Dir, "tied.v0.bin"))
	if err != nil {
		t.Fatal(err)
	}
	w := m.Weights["layers.0.attention.wq"]
	if w == nil {
		for k := range m.Weights {
			w = m.Weights[k]
			break
		}
	}
	w[3] = float32(math.NaN())
	nan := filepath.Join(dir, "nan.bin")
	if err := ckpt.SaveLlama2(nan, m, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"init", quote(nan), "tokenizer", quote(filepath.Join(llama2Dir, "tokenizer.bin")), "data", quote("../data/Isaac.Newton-Opticks.txt")}, "element 3"},
		{[]string{"lr", "-1"}, "lr = -1.0: must lie in (0, 10]"},
		{[]string{"lr", `float("inf")`}, "lr = +inf"},
		{[]string{"weight_decay", `float("nan")`}, "weight_decay = nan"},
	} {
		mpath := filepath.Join(dir, "m.jsonl")
		os.Remove(mpath)
		p := lmSmall(dir, append(tc.kv, "metrics", quote(mpath))...)
		if tc.kv[0] == "init" { // the file's header gives the sizes
			p = map[string]string{"seq": "32", "batch": "2", "steps": "2", "ckpt": `""`, "metrics": quote(mpath)}
			for i := 0; i+1 < len(tc.kv); i += 2 {
				p[tc.kv[i]] = tc.kv[i+1]
			}
		}
		_, out, err := runLM(t, p, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want one saying %q\n%s", tc.kv, err, tc.want, out)
		}
		if data, _ := os.ReadFile(mpath); len(data) > 0 {
			t.Errorf("%v: %d bytes of metrics logged before the refusal", tc.kv, len(data))
		}
	}
}

// Messages that misled: a val_frac too small for any validation text (it said "tensor.from_list: empty
// list"), a run of no steps (it printed rates of nothing), a sample window not a multiple of 32 (it blamed
// the model's max_seq_len), a train_layer checkpoint sampled, an init model's vocabulary against
// another tokenizer's (it offered a --set vocab that the model's header refuses).
func TestMessagesSayWhatIsWrong(t *testing.T) {
	base := map[string]string{"dim": "64", "layers": "1", "heads": "4", "kv_heads": "2", "hidden": "192", "vocab": "300",
		"seq": "32", "batch": "2", "warmup": "0", "eval_every": "0", "ckpt": `""`, "metrics": `""`}
	with := func(kv ...string) map[string]string {
		p := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	if _, out, err := runLM(t, with("val_frac", "1e-9", "steps", "1"), false); err == nil || !strings.Contains(err.Error(), "leaves no validation text") {
		t.Errorf("val_frac 1e-9: %v\n%s", err, out)
	}
	_, out := mustRunLM(t, with("steps", "0"), false)
	if !strings.Contains(out, "no training steps ran") || strings.Contains(out, "TFLOP/s") || strings.Contains(out, "Tokens/s") {
		t.Errorf("steps 0: the report gives rates of no work:\n%s", out)
	}
	var stdout, stderr strings.Builder
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script: "sample.star", Backend: emulator.New(emulator.Options{}), Stdout: &stdout, Stderr: &stderr,
		Params: map[string]string{"model": quote(filepath.Join(llama2Dir, "tied.v0.bin")), "tokenizer": quote(filepath.Join(llama2Dir, "tokenizer.bin")), "seq": "1"},
	})
	if err == nil || !strings.Contains(err.Error(), "seq = 1: a window is a multiple of 32 positions") {
		t.Errorf("sample seq=1: %v", err)
	}
	// A train_layer.star checkpoint given to sample.star (it said: key "layers" not in dict).
	c := filepath.Join(t.TempDir(), "layer.safetensors")
	layer := map[string]string{"dim": "32", "hidden": "64", "heads": "4", "seq": "32", "steps": "2", "accum": "2", "ckpt": quote(c), "metrics": `""`}
	runScript(t, trainLayer, layer, emulator.Options{}, false)
	_, err = builtins.Run(context.Background(), builtins.Config{
		Script: "sample.star", Backend: emulator.New(emulator.Options{}), Stdout: &stdout, Stderr: &stderr,
		Params: map[string]string{"model": quote(c), "tokenizer": quote(filepath.Join(llama2Dir, "tokenizer.bin"))},
	})
	if err == nil || !strings.Contains(err.Error(), "not a checkpoint of a language model") {
		t.Errorf("sample of a train_layer checkpoint: %v", err)
	}
	// A text given as tokens (a name ending in .bin, an even or an odd length) and tokens given as text.
	td := t.TempDir()
	book, err := os.ReadFile("../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := os.ReadFile("testdata/lm_ref/tokens.bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"even.bin", book[:20000], "even.bin reads as text"},
		{"odd.bin", book[:20001], "odd.bin reads as text"},
		{"tokens.txt", toks, "tokens.txt does not read as text"},
	} {
		f := filepath.Join(td, c.name)
		os.WriteFile(f, c.data, 0o644)
		if _, _, err := runLM(t, with("data", quote(f), "steps", "1"), false); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("data %s: %v, want %q", c.name, err, c.want)
		}
	}
	// init of a model with another model's tokenizer (it suggested a --set vocab the header then refused).
	exp := filepath.Join(t.TempDir(), "m.bin")
	mustRunLM(t, with("data", quote("testdata/lm_ref/tokens.bin"), "steps", "1", "export", quote(exp)), false)
	if _, _, err := runLM(t, map[string]string{"init": quote(exp), "tokenizer": quote("../tokenizer/testdata/sp_opticks_512.bin"), "eval_only": "True", "ckpt": `""`}, false); err == nil ||
		!strings.Contains(err.Error(), "has a vocabulary of 300 pieces") || strings.Contains(err.Error(), "--set vocab") {
		t.Errorf("init with another model's tokenizer: %v", err)
	}
}
