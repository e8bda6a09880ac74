package scripts

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/internal/proctime"
	"go.starlark.net/starlark"
)

// lmSmall are the sizes train_lm.star's tests run at, on the reference's token stream (vocab 300).
func lmSmall(dir string, kv ...string) map[string]string {
	m := map[string]string{
		"data": quote("testdata/lm_ref/tokens.bin"), "dim": "64", "layers": "2", "heads": "4", "kv_heads": "2",
		"hidden": "192", "vocab": "300", "seq": "32", "batch": "2", "steps": "6", "warmup": "2", "eval_every": "3",
		"ckpt": quote(filepath.Join(dir, "lm.safetensors")), "ckpt_every": "3", "metrics": quote(filepath.Join(dir, "lm.jsonl")),
		"best": quote(filepath.Join(dir, "best.safetensors")),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func runLM(t *testing.T, params map[string]string, resume bool) (*builtins.Result, string, error) {
	t.Helper()
	var out strings.Builder
	argv := []string{"run", "train_lm.star"}
	if resume {
		argv = append(argv, "--resume")
	}
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script: "train_lm.star", Backend: emulator.New(emulator.Options{}), Params: params,
		Resume: resume, Stdout: &out, Argv: argv,
	})
	return res, out.String(), err
}

func mustRunLM(t *testing.T, params map[string]string, resume bool) (*builtins.Result, string) {
	t.Helper()
	res, out, err := runLM(t, params, resume)
	if err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatalf("%s\noutput:\n%s", ee.Backtrace(), out)
		}
		t.Fatalf("%v\noutput:\n%s", err, out)
	}
	return res, out
}

// TestTrainLM runs train_lm.star small: the validation lines and samples during and after training,
// the metrics keys, the report, and a resume from the step-3 checkpoint that gives the bits of an
// uninterrupted run.
func TestTrainLM(t *testing.T) {
	dir := t.TempDir()
	res, out := mustRunLM(t, lmSmall(dir), false)
	for _, re := range []string{`(?m)^step 3 val_loss \d+\.\d{4}$`, `(?m)^step 6 val_loss \d+\.\d{4}$`, `note: token data without a tokenizer: val_bpb and samples are left out`,
		`Efficiency Report`, `Compiles: +6 at the start, 0 since`, `Tokens/s: +\d+`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output has no %s:\n%s", re, out)
		}
	}
	checkCoresBusy(t, out)
	f, err := os.Open(filepath.Join(dir, "lm.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	steps, vals := 0, 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		if _, ok := rec["val_loss"]; ok {
			vals++
			continue
		}
		for _, k := range []string{"step", "loss", "lr", "loss_scale", "ms", "tokens_per_s"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("metrics line %s has no %s", sc.Text(), k)
			}
		}
		steps++
	}
	if steps != 6 || vals != 2 {
		t.Errorf("metrics: %d step lines and %d validation lines, want 6 and 2", steps, vals)
	}
	want := tensorDict(t, res, "W")

	// Stopped at step 3 and resumed: the same weights, bit for bit.
	dir2 := t.TempDir()
	mustRunLM(t, lmSmall(dir2, "steps", "3"), false)
	res2, out2 := mustRunLM(t, lmSmall(dir2), true)
	if !strings.Contains(out2, "[resumed at step 3") {
		t.Errorf("resumed run says:\n%s", out2)
	}
	got := tensorDict(t, res2, "W")
	for k, w := range want {
		g := got[k].Data()
		for i, v := range w.Data() {
			if g[i] != v {
				t.Fatalf("resumed %s[%d] = %g, uninterrupted %g", k, i, g[i], v)
			}
		}
	}
}

// TestTrainLMBadSizes checks that sizes that cannot work fail before anything compiles, naming the
// parameter and a value that works.
func TestTrainLMBadSizes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"dim", "66"}, "dim = 66 does not divide by heads = 4: try --set dim=72"},
		{[]string{"kv_heads", "3"}, "heads = 4 does not divide by kv_heads = 3: try --set kv_heads=4"},
		{[]string{"seq", "48"}, "seq = 48: the ANE needs a multiple of 32 (a surface's width): try --set seq=64"},
		{[]string{"vocab", "100"}, "try --set vocab=300"},
		{[]string{"seq", "4096"}, "fewer than one window of seq + 1 = 4097: try --set seq="},
		{[]string{"batch", "0"}, "batch = 0: must be at least 1"},
	} {
		_, out, err := runLM(t, lmSmall(dir, c.kv...), false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.kv, err, c.want)
		}
		if strings.Contains(out, "kernels:") {
			t.Errorf("%v: kernels were compiled before the error:\n%s", c.kv, out)
		}
	}
}

// TestTrainLMLlamaGeometries trains at llama2.c's own FFN widths, which the hand-packed kernels refused
// (2*hidden*seq had to divide by dim into a multiple of 32): stories260K's dim 64, hidden 172, 8 heads of
// which 4 kv, and stories15M's dim 288, hidden 768, 6 heads (two layers, short windows: a test's size).
// Packed kernels take them as they are; the loss falls.
func TestTrainLMLlamaGeometries(t *testing.T) {
	for _, kv := range [][]string{
		{"dim", "64", "hidden", "172", "heads", "8", "kv_heads", "4"},
		{"dim", "288", "hidden", "768", "heads", "6", "kv_heads", "6", "batch", "1"},
		{"dim", "96", "hidden", "190"},
	} {
		_, out := mustRunLM(t, lmSmall(t.TempDir(), append(kv, "steps", "8", "eval_every", "0")...), false)
		m := regexp.MustCompile(`(?m)^step (\d+)/8 +loss (\d+\.\d+)`).FindAllStringSubmatch(out, -1)
		if len(m) < 2 {
			t.Fatalf("%v: no step losses in:\n%s", kv, out)
		}
		first, _ := strconv.ParseFloat(m[0][2], 64)
		last, _ := strconv.ParseFloat(m[len(m)-1][2], 64)
		if !(last < first) {
			t.Errorf("%v: loss %v at step %s, %v at step %s: it did not fall", kv, first, m[0][1], last, m[len(m)-1][1])
		}
	}
}

// TestTrainLMInitExport exports a trained model as a llama2.c file, evaluates it again from that file
// (eval_only with init: the same validation loss), fine-tunes from it, and refuses a --set that
// contradicts the file's header.
func TestTrainLMInitExport(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "model.bin")
	_, out := mustRunLM(t, lmSmall(dir, "export", quote(exp), "ckpt", `""`), false)
	last := regexp.MustCompile(`(?m)^step 6 val_loss (\S+)$`).FindStringSubmatch(out)
	if last == nil {
		t.Fatalf("no final validation loss:\n%s", out)
	}
	init := map[string]string{"data": quote("testdata/lm_ref/tokens.bin"), "seq": "32", "batch": "2", "init": quote(exp), "ckpt": `""`}
	with := func(kv ...string) map[string]string { return withParams(init, kv...) }
	_, out = mustRunLM(t, with("eval_only", "True"), false)
	if !strings.Contains(out, "step 0 val_loss "+last[1]+"\n") {
		t.Errorf("eval_only of the export: want val_loss %s, got:\n%s", last[1], out)
	}
	_, out = mustRunLM(t, with("steps", "2", "eval_every", "0"), false)
	if !strings.Contains(out, "[initialised from") || !strings.Contains(out, "step 2 val_loss") {
		t.Errorf("fine-tune from the export:\n%s", out)
	}
	_, _, err := runLM(t, with("dim", "128"), false)
	if err == nil || !strings.Contains(err.Error(), "its header has dim = 64") {
		t.Errorf("contradicting --set dim=128: %v", err)
	}
	// Without --set seq the header's context is the window (the default, 128, is not taken).
	long := filepath.Join(dir, "long.bin")
	mustRunLM(t, lmSmall(dir, "seq", "64", "steps", "1", "eval_every", "0", "export", quote(long), "ckpt", `""`, "metrics", `""`), false)
	bare := map[string]string{"data": quote("testdata/lm_ref/tokens.bin"), "batch": "2", "init": quote(long), "ckpt": `""`, "eval_only": "True"}
	if _, out = mustRunLM(t, bare, false); !strings.Contains(out, "vocab 300, seq 64 ===") {
		t.Errorf("init of a 64-position model without --set seq: want seq 64:\n%s", out)
	}
	if _, out = mustRunLM(t, withParams(bare, "seq", "32"), false); !strings.Contains(out, "vocab 300, seq 32 ===") {
		t.Errorf("init with --set seq=32: want seq 32:\n%s", out)
	}
}

// TestTrainLMText trains on the shipped corpus (data = "", found beside the script) with a vocabulary
// trained on its training part and cached beside the checkpoint: val_bpb and text samples are printed;
// sample.star then continues a prompt from the exported model with that tokenizer.
func TestTrainLMText(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "model.bin")
	params := lmSmall(dir, "data", `""`, "vocab", "320", "steps", "2", "eval_every", "0", "export", quote(exp))
	_, out := mustRunLM(t, params, false)
	if !regexp.MustCompile(`(?m)^step 2 val_loss \d+\.\d{4} val_bpb \d+\.\d{4}$`).MatchString(out) {
		t.Errorf("no val_bpb line:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^sample: ".+"$`).MatchString(out) {
		t.Errorf("no text sample:\n%s", out)
	}
	tok := filepath.Join(dir, "lm.tokenizer.bin")
	if _, err := os.Stat(tok); err != nil {
		t.Fatalf("the trained tokenizer is not cached: %v", err)
	}
	var stdout, stderr strings.Builder
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script: "sample.star", Backend: emulator.New(emulator.Options{}), Stdout: &stdout, Stderr: &stderr,
		Params: map[string]string{"model": quote(exp), "tokenizer": quote(tok), "prompt": quote("Light is"), "steps": "12", "temperature": "0"},
	})
	if err != nil {
		t.Fatalf("sample.star: %v\n%s", err, stdout.String())
	}
	if !strings.HasPrefix(stdout.String(), "Light is") || strings.Contains(stdout.String(), "tokens/s") {
		t.Errorf("sample.star's standard output: %q", stdout.String())
	}
	if !strings.Contains(stderr.String(), "tokens/s") {
		t.Errorf("sample.star's standard error: %q", stderr.String())
	}
	// From the checkpoint, which names its tokenizer.
	stdout.Reset()
	_, err = builtins.Run(context.Background(), builtins.Config{
		Script: "sample.star", Backend: emulator.New(emulator.Options{}), Stdout: &stdout,
		Params: map[string]string{"model": quote(filepath.Join(dir, "lm.safetensors")), "prompt": quote("Light is"), "steps": "5"},
	})
	if err != nil || !strings.HasPrefix(stdout.String(), "Light is") {
		t.Errorf("sample.star from the checkpoint: %v, %q", err, stdout.String())
	}
}

// TestTrainLMTokenizerCache: the vocabulary written beside the checkpoint is trained afresh on every new
// run (another text gives another vocabulary, never the stale one), and a resumed run whose fresh
// vocabulary differs from the checkpoint's (the text or the trainer changed) uses the checkpoint's.
func TestTrainLMTokenizerCache(t *testing.T) {
	dir := t.TempDir()
	book, err := os.ReadFile("../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(a, book[:60000], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, book[200000:260000], 0o644); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "lm.tokenizer.bin")
	run := func(data string, steps string, resume bool) []byte {
		t.Helper()
		mustRunLM(t, lmSmall(dir, "data", quote(data), "vocab", "320", "steps", steps, "eval_every", "0"), resume)
		v, err := os.ReadFile(cache)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	va := run(a, "2", false)
	vb := run(b, "2", false)
	if string(va) == string(vb) {
		t.Fatal("a run on another text kept the vocabulary of the first")
	}
	run(a, "2", false)
	if v := run(b, "3", true); string(v) != string(va) {
		t.Error("resuming on another text replaced the checkpoint's vocabulary")
	}
}

// TestTrainLMProbsRecomputed trains at sizes whose softmax probabilities do not fit the attention
// backward's input (lm_probs_fit is false: 4*32*32 values in 96 rows), so that it recomputes them: the
// run completes and its loss falls.
func TestTrainLMProbsRecomputed(t *testing.T) {
	_, out := mustRunLM(t, lmSmall(t.TempDir(), "dim", "96", "kv_heads", "4", "batch", "1", "steps", "8", "eval_every", "0"), false)
	m := regexp.MustCompile(`(?m)^step (\d+)/8 +loss (\d+\.\d+)`).FindAllStringSubmatch(out, -1)
	if len(m) < 2 {
		t.Fatalf("no step losses in:\n%s", out)
	}
	first, _ := strconv.ParseFloat(m[0][2], 64)
	last, _ := strconv.ParseFloat(m[len(m)-1][2], 64)
	if !(last < first) {
		t.Fatalf("loss %v at step %s, %v at step %s: it did not fall\n%s", first, m[0][1], last, m[len(m)-1][1], out)
	}
}

// TestTrainLMInitShortContext: a llama2.c model of fewer than 32 positions is refused with what is wrong
// (its max_seq_len below a window), not a hint of --set seq=0.
func TestTrainLMInitShortContext(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "s16.bin")
	if _, err := builtins.Run(context.Background(), builtins.Config{Script: "testdata/llama2_random.star", Backend: emulator.New(emulator.Options{}),
		Params: map[string]string{"out": quote(model), "dim": "32", "hidden": "64", "layers": "1", "heads": "2", "kv_heads": "2", "vocab": "300", "max_seq_len": "16"},
		Stdout: &strings.Builder{}}); err != nil {
		t.Fatal(err)
	}
	_, _, err := runLM(t, map[string]string{"data": quote("testdata/lm_ref/tokens.bin"), "init": quote(model), "steps": "1",
		"ckpt": quote(""), "metrics": quote("")}, false)
	if err == nil || !strings.Contains(err.Error(), "its max_seq_len 16 is shorter than a window of 32 positions") || strings.Contains(err.Error(), "seq=0") {
		t.Errorf("error %v", err)
	}
}

// TestTrainLMExportVocabulary: an export from text writes its vocabulary beside it (M.tokenizer.bin),
// which init on text and sample.star find without a --set tokenizer; a model with no vocabulary beside
// it is refused for text data instead of fine-tuned on a vocabulary trained afresh.
func TestTrainLMExportVocabulary(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "m.bin")
	text := map[string]string{"dim": "64", "layers": "2", "heads": "4", "kv_heads": "2", "hidden": "172", "vocab": "300",
		"seq": "32", "batch": "2", "steps": "4", "eval_every": "0", "metrics": quote(""), "ckpt": quote("")}
	_, out := mustRunLM(t, withParams(text, "export", quote(exp)), false)
	beside := filepath.Join(dir, "m.tokenizer.bin")
	if _, err := os.Stat(beside); err != nil || !strings.Contains(out, "and its vocabulary "+beside) {
		t.Fatalf("no vocabulary beside the export (%v):\n%s", err, out)
	}
	init := map[string]string{"init": quote(exp), "steps": "2", "eval_every": "0", "metrics": quote(""), "ckpt": quote(""), "seq": "32", "batch": "2"}
	if _, out := mustRunLM(t, init, false); !strings.Contains(out, "[initialised from") {
		t.Errorf("init of the export on text:\n%s", out)
	}
	res, _, _ := runSample(t, emulator.FP32, map[string]string{"model": quote(exp), "prompt": quote("Light"), "steps": "4", "temperature": "0"})
	if res.Globals["out"] == nil {
		t.Errorf("sample.star of the export without a tokenizer gave no ids")
	}
	if err := os.Remove(beside); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runLM(t, init, false); err == nil || !strings.Contains(err.Error(), "no vocabulary beside it and none given") {
		t.Errorf("init on text without the model's vocabulary: %v", err)
	}
}

// withParams returns a copy of m with the key, value pairs kv set.
func withParams(m map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestTrainLMResumeTakesSizes: --resume of a run of non-default sizes continues without repeating them
// (the checkpoint's, which the run names), and a --set that contradicts one is still refused.
func TestTrainLMResumeTakesSizes(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "lm.safetensors")
	first := map[string]string{"data": quote("testdata/lm_ref/tokens.bin"), "dim": "96", "layers": "2", "heads": "4", "kv_heads": "2",
		"hidden": "172", "vocab": "300", "seq": "32", "batch": "2", "steps": "4", "eval_every": "0", "ckpt": quote(ck), "metrics": quote("")}
	mustRunLM(t, first, false)
	again := map[string]string{"data": quote("testdata/lm_ref/tokens.bin"), "batch": "2", "steps": "6", "eval_every": "0", "ckpt": quote(ck), "metrics": quote("")}
	_, out := mustRunLM(t, again, true)
	if !strings.Contains(out, "[the checkpoint's dim = 96, layers = 2, kv_heads = 2, hidden = 172, vocab = 300, seq = 32]") || !strings.Contains(out, "step 6/6") {
		t.Errorf("resume without the sizes:\n%s", out)
	}
	if _, _, err := runLM(t, withParams(again, "dim", "128"), true); err == nil || !strings.Contains(err.Error(), "dim = 96, this run has dim = 128") {
		t.Errorf("resume with a contradicting --set dim=128: %v", err)
	}
	// eval_only evaluates the checkpoint as it is: its sizes too.
	if _, out := mustRunLM(t, withParams(again, "eval_only", "True"), false); !strings.Contains(out, "[the checkpoint's dim = 96") || !strings.Contains(out, "step 6 val_loss") {
		t.Errorf("eval_only without the sizes:\n%s", out)
	}
}

// TestTrainLMAccum trains with accum = 2, batch = 2 and with batch = 4 in fp32 numerics without dropout:
// the same sequences per step (drawn as one batch of accum x batch), the gradient of their mean loss,
// so the same losses within rounding (the groups per eval differ: 2 and 4 sequences side by side).
func TestTrainLMAccum(t *testing.T) {
	dir := t.TempDir()
	losses := func(kv ...string) []float64 {
		m := filepath.Join(dir, kv[1]+".jsonl")
		p := lmSmall(dir, append([]string{"dropout", "0.0", "steps", "8", "eval_every", "0", "ckpt", `""`, "metrics", quote(m)}, kv...)...)
		var out strings.Builder
		if _, err := builtins.Run(context.Background(), builtins.Config{
			Script: "train_lm.star", Backend: emulator.New(emulator.Options{Numerics: emulator.FP32}), Params: p, Stdout: &out,
		}); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		var l []float64
		for _, r := range readJSONL(t, m) {
			if v, ok := r["loss"].(float64); ok {
				l = append(l, v)
			}
		}
		if len(l) != 8 {
			t.Fatalf("%v: %d step losses, want 8", kv, len(l))
		}
		return l
	}
	a, b := losses("batch", "4"), losses("batch", "2", "accum", "2")
	for i := range a {
		if d := math.Abs(a[i]-b[i]) / math.Abs(a[i]); d > 1e-4 {
			t.Errorf("step %d: loss %.7f with batch 4, %.7f with accum 2 x batch 2 (%.2g relative)", i+1, a[i], b[i], d)
		}
	}
	t.Logf("batch 4: %.6f -> %.6f; accum 2 x 2: %.6f -> %.6f", a[0], a[7], b[0], b[7])
	c := losses("batch", "1", "accum", "4") // four batches of one: the slots reused batch after batch
	if d := math.Abs(a[7]-c[7]) / a[7]; d > 1e-4 {
		t.Errorf("step 8: loss %.7f with batch 4, %.7f with accum 4 x batch 1", a[7], c[7])
	}
}

// TestTrainLMBudget: with a budget the run ends inside it at min_lr, the steps that fit estimated as it
// goes; the checkpoint keeps what is left, and --resume with a new budget trains on. The best
// checkpoint holds the step of the lowest validation loss, and export writes its weights when a later
// step is worse (here a resumed run at a learning rate that ruins the model).
func TestTrainLMBudget(t *testing.T) {
	dir := t.TempDir()
	p := lmSmall(dir, "budget", "3", "eval_every", "20", "warmup", "5", "steps", "1000000")
	start := time.Now()
	_, out := mustRunLM(t, p, false)
	recs := readJSONL(t, filepath.Join(dir, "lm.jsonl"))
	var steps int
	var lastLR, bestVal float64 = 0, 1e9
	bestStep := 0
	for _, r := range recs {
		if v, ok := r["val_loss"].(float64); ok {
			if v < bestVal {
				bestVal, bestStep = v, int(r["step"].(float64))
			}
			continue
		}
		steps, lastLR = int(r["step"].(float64)), r["lr"].(float64)
	}
	t.Logf("budget 3 s: %d steps in %s, last lr %.3g", steps, time.Since(start), lastLR)
	if steps < 20 || steps >= 1000000 || lastLR > 1.5e-4*1.2 || !strings.Contains(out, "budget: 3.0 s of wall time left") {
		t.Errorf("budget 3 s: %d steps, last lr %g (min_lr 1.5e-4):\n%s", steps, lastLR, out)
	}
	if el := time.Since(start); el > 40*time.Second { // setup and compiling are not in the budget
		t.Errorf("a 3 s budget took %s", el)
	}
	// Seconds of steps: the report gives its cores-busy line (TestTrainLM's steps are too short for one).
	if _, ok := proctime.CPU(); ok && !strings.Contains(out, "Cores busy:") {
		t.Errorf("a 3 s budget's report has no cores-busy line:\n%s", out)
	}
	checkCoresBusy(t, out)
	f, err := ckpt.Load(filepath.Join(dir, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Metadata["lm/best_step"]; got != fmt.Sprint(bestStep) {
		t.Errorf("best checkpoint of step %s, the lowest val_loss is step %d's", got, bestStep)
	}
	// A new budget on resume trains on; at lr 0.05 the model gets worse, so export takes the best weights.
	// (Not a larger lr: from about 0.2 the weights overflow fp16 within a few steps and every step after
	// is skipped; a fast machine fits the 100 skipped steps that stop a run into any budget.)
	exp := filepath.Join(dir, "e.bin")
	_, out = mustRunLM(t, withParams(p, "budget", "0.5", "lr", "0.05", "min_lr", "0.05", "export", quote(exp)), true)
	if !strings.Contains(out, "export: the best weights") {
		t.Fatalf("resumed at lr 0.05: export did not take the best weights:\n%s", out)
	}
	m, err := ckpt.ReadLlama2(exp)
	if err != nil {
		t.Fatal(err)
	}
	best, err := ckpt.Load(filepath.Join(dir, "best.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := best.Tensors["param/emb"].Float32()
	if err != nil {
		t.Fatal(err)
	}
	got := m.Weights["tok_embeddings.weight"]
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("the export's embedding differs from the best checkpoint's at %d", i)
		}
	}
}

// TestTrainLMValWindows: with val_windows = k the validation loss is the loss over k windows spread
// evenly over the validation tokens (window i * count // k): the same figure, bit for bit, as every
// window of a file holding just those windows.
func TestTrainLMValWindows(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/lm_ref/tokens.bin")
	if err != nil {
		t.Fatal(err)
	}
	const seq, count, k = 32, 20, 6
	win := 2 * (seq + 1) // bytes per window
	if len(src) < count*win {
		t.Fatalf("testdata/lm_ref/tokens.bin holds %d windows, want %d", len(src)/win, count)
	}
	full, picked := filepath.Join(dir, "val.bin"), filepath.Join(dir, "picked.bin")
	var sub []byte
	for i := range k {
		j := i * count / k
		sub = append(sub, src[j*win:(j+1)*win]...)
	}
	if err := os.WriteFile(full, src[:count*win], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(picked, sub, 0o644); err != nil {
		t.Fatal(err)
	}
	loss := func(val string, windows int) string {
		_, out := mustRunLM(t, lmSmall(dir, "val_data", quote(val), "val_windows", strconv.Itoa(windows), "steps", "2",
			"eval_every", "0", "ckpt", `""`, "best", `""`, "metrics", `""`), false)
		m := regexp.MustCompile(`(?m)^step 2 val_loss (\S+)`).FindStringSubmatch(out)
		if m == nil || !strings.Contains(out, fmt.Sprintf("(%d windows)", k)) {
			t.Fatalf("val_data %s, val_windows %d: no val_loss over %d windows in:\n%s", val, windows, k, out)
		}
		return m[1]
	}
	if a, b := loss(full, k), loss(picked, 0); a != b {
		t.Errorf("val_windows = %d of %d windows: val_loss %s; the same windows as a file: %s", k, count, a, b)
	}
}

// checkCoresBusy checks the report's cores-busy line where it is given (from a second of steps on:
// lm_cores_line, TestLMCoresLine; TestTrainLMBudget's run has one): each figure is CPU over wall time, above 0 and at most the machine's
// cores (plus the CPU clock's slack over short spans), and the cores are GOMAXPROCS.
func checkCoresBusy(t *testing.T, out string) {
	t.Helper()
	if _, ok := proctime.CPU(); !ok || !strings.Contains(out, "Cores busy:") {
		return
	}
	m := regexp.MustCompile(`Cores busy: +(\d+\.\d\d) of (\d+) on average: forward (\d+\.\d\d|-), classifier (\d+\.\d\d|-), backward (\d+\.\d\d|-), optimizer (\d+\.\d\d|-)`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("output has a malformed cores-busy line:\n%s", out)
		return
	}
	if m[2] != strconv.Itoa(runtime.GOMAXPROCS(0)) {
		t.Errorf("cores busy of %s, want GOMAXPROCS %d", m[2], runtime.GOMAXPROCS(0))
	}
	for i, name := range []string{"on average", "forward", "classifier", "backward", "optimizer"} {
		f := m[[]int{1, 3, 4, 5, 6}[i]]
		if f == "-" {
			continue
		}
		v, _ := strconv.ParseFloat(f, 64)
		if v <= 0 || v > float64(runtime.NumCPU())+0.5 {
			t.Errorf("cores busy %s: %g on %d cores", name, v, runtime.NumCPU())
		}
	}
}
