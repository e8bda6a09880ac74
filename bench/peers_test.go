package bench

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/tokenizer"
)

// The peers need PyTorch; these tests run them at tiny sizes where /usr/bin/python3 has it, and are
// skipped elsewhere (go test needs no Python).

const python = "/usr/bin/python3"

func needTorch(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the peers take seconds")
	}
	if err := exec.Command(python, "-c", "import torch, numpy").Run(); err != nil {
		t.Skipf("%s cannot import torch and numpy (apt-get install python3-torch python3-numpy): %v", python, err)
	}
}

// peer runs a peer script and decodes its last output line.
func peer(t *testing.T, script string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join("peers", script), "--threads", "1"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatalf("%s: last line %q: %v", script, lines[len(lines)-1], err)
	}
	return rec
}

func num(t *testing.T, rec map[string]any, key string) float64 {
	t.Helper()
	v, ok := rec[key].(float64)
	if !ok {
		t.Fatalf("%v: no number %q", rec, key)
	}
	return v
}

// TestLayerPeer: the layer peer reports its speed, and training lowers the loss of the script's task.
func TestLayerPeer(t *testing.T) {
	needTorch(t)
	sizes := []string{"--dim", "32", "--hidden", "64", "--heads", "4", "--seq", "16", "--warmup", "0", "--accum", "1"}
	first := peer(t, "torch_layer.py", append(sizes, "--steps", "1")...)
	later := peer(t, "torch_layer.py", append(sizes, "--steps", "60")...)
	if first["peer"] != "pytorch" || num(t, later, "ms_per_step") <= 0 {
		t.Errorf("result %v", later)
	}
	if l0, l1 := num(t, first, "loss"), num(t, later, "loss"); !(l1 < 0.5*l0) {
		t.Errorf("loss %g after 60 steps, %g after 1: want it at least halved", l1, l0)
	}
}

// TestLMPeer: val_bpb divides the summed validation loss by the bytes of the predicted pieces, counted
// as the doc string says, over whole windows only; an untrained model is about as good as a uniform
// guess, and training on a repeating text brings the loss far down.
func TestLMPeer(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	pattern, bytesOf := lmFiles(t, dir)
	args := func(steps int) []string { return append(lmSizes(dir), "--steps", strconv.Itoa(steps)) }
	untrained := peer(t, "torch_lm.py", args(0)...)
	loss := num(t, untrained, "val_loss")
	if math.Abs(loss-math.Log(8)) > 0.5 {
		t.Errorf("untrained val_loss %g, want about ln 8 = %g", loss, math.Log(8))
	}
	// Six windows of 17 tokens (the 5 left over are dropped); each predicts its last 16.
	var nbytes float64
	for w := range 6 {
		for i := 1; i < 17; i++ {
			nbytes += bytesOf[pattern[(w*17+i)%len(pattern)]]
		}
	}
	want := loss * 6 * 16 / math.Ln2 / nbytes
	if got := num(t, untrained, "val_bpb"); math.Abs(got-want) > 1e-3 {
		t.Errorf("val_bpb %g, want %g", got, want)
	}
	trained := peer(t, "torch_lm.py", args(80)...)
	if got := num(t, trained, "val_loss"); !(got < 0.5) || num(t, trained, "tokens_per_s") <= 0 {
		t.Errorf("after 80 steps on a repeating text: %v", trained)
	}
}

// lmSizes are the tiny model's arguments, on lmFiles in dir.
func lmSizes(dir string) []string {
	return []string{"--train", filepath.Join(dir, "train.bin"), "--val", filepath.Join(dir, "val.bin"),
		"--tokenizer", filepath.Join(dir, "tok.bin"), "--vocab", "8", "--dim", "32", "--layers", "2",
		"--heads", "4", "--kv-heads", "2", "--seq", "16", "--batch", "4", "--warmup", "5", "--lr", "3e-3"}
}

// lmFiles writes the tiny model's files to dir: a tokenizer of 8 pieces, and training and validation
// tokens repeating a pattern. It returns the pattern and the bytes of each piece.
func lmFiles(t *testing.T, dir string) ([]uint16, []float64) {
	t.Helper()
	// A tokenizer of 8 pieces: <unk>, BOS, EOS, a byte piece, then pieces of 1, 2, 3 and 1 bytes.
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n", "<0x41>", "a", "bc", " de", "f"}
	bytesOf := []float64{5, 0, 0, 1, 1, 2, 3, 1}
	var tok []byte
	tok = binary.LittleEndian.AppendUint32(tok, 6)
	for i, p := range pieces {
		tok = binary.LittleEndian.AppendUint32(tok, math.Float32bits(float32(-i)))
		tok = binary.LittleEndian.AppendUint32(tok, uint32(len(p)))
		tok = append(tok, p...)
	}
	pattern := []uint16{3, 4, 5, 6, 7, 1, 2, 5, 4}
	ids := func(n int) []byte {
		var b []byte
		for i := range n {
			b = binary.LittleEndian.AppendUint16(b, pattern[i%len(pattern)])
		}
		return b
	}
	files := map[string][]byte{"tok.bin": tok, "train.bin": ids(4000), "val.bin": ids(17*6 + 5)}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return pattern, bytesOf
}

// TestLMPeerHyperparameters: every train_lm.star hyperparameter is taken (dropout, min-lr, warmup, betas,
// weight decay, clip, and train_lm.star's name weight-decay beside wd), changes the run where it should,
// and values out of range are refused.
func TestLMPeerHyperparameters(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	lmFiles(t, dir)
	run := func(extra ...string) map[string]any {
		return peer(t, "torch_lm.py", append(append(lmSizes(dir), "--steps", "30", "--seed", "3"), extra...)...)
	}
	plain := run()
	same := run("--dropout", "0", "--beta1", "0.9", "--beta2", "0.95", "--weight-decay", "0.1", "--clip", "1", "--min-lr", "3e-4")
	if plain["val_loss"] != same["val_loss"] || plain["train_loss"] != same["train_loss"] {
		t.Errorf("the defaults given explicitly changed the run: %v against %v", same, plain)
	}
	for _, hp := range [][]string{{"--dropout", "0.2"}, {"--min-lr", "3e-5"}, {"--warmup", "20"}, {"--beta1", "0.5"},
		{"--beta2", "0.99"}, {"--wd", "0.5"}, {"--weight-decay", "0.5"}, {"--clip", "0.05"}} {
		got := run(hp...)
		if got["train_loss"] == plain["train_loss"] {
			t.Errorf("%v did not change the run: train_loss %v", hp, got["train_loss"])
		}
		if v := num(t, got, "val_loss"); !(v < math.Log(8)) {
			t.Errorf("%v: val_loss %g after 30 steps, no better than a uniform guess", hp, v)
		}
	}
	for _, bad := range [][]string{{"--dropout", "1"}, {"--beta2", "-1"}, {"--min-lr", "nan"}, {"--budget", "-5"}} {
		lmRefuses(t, append(lmSizes(dir), bad...))
	}
}

// lmRefuses checks that the LM peer exits with an error on args.
func lmRefuses(t *testing.T, args []string) {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join("peers", "torch_lm.py")}, args...)...)
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("%v accepted:\n%s", args, out)
	}
}

// TestLMPeerBudget: with --budget the run trains for about that wall time, whatever --steps says, and
// its schedule, laid over the steps that fit, ends near min-lr; a budget shorter than a step is an error.
func TestLMPeerBudget(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	lmFiles(t, dir)
	const budget, minLR = 1.5, 3e-4
	rec := peer(t, "torch_lm.py", append(lmSizes(dir), "--steps", "3", "--budget", strconv.FormatFloat(budget, 'g', -1, 64),
		"--min-lr", strconv.FormatFloat(minLR, 'g', -1, 64), "--eval-every", "10")...)
	steps, wall := num(t, rec, "steps"), num(t, rec, "wall_s")
	if steps <= 10 || num(t, rec, "budget") != budget {
		t.Errorf("%v: want well over --steps 3 steps in %g s", rec, budget)
	}
	if wall > budget*1.1 || wall < budget*0.5 {
		t.Errorf("trained for %g s of a %g s budget", wall, budget)
	}
	if lr := num(t, rec, "last_lr"); !(lr >= minLR && lr < minLR+0.2*(3e-3-minLR)) {
		t.Errorf("last step's lr %g: want the cosine near its floor %g at the budget's end", lr, minLR)
	}
	cmd := exec.Command(python, append([]string{filepath.Join("peers", "torch_lm.py")}, append(lmSizes(dir), "--budget", "1e-6")...)...)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "shorter than one step") {
		t.Errorf("--budget 1e-6: %v\n%s", err, out)
	}
}

// TestPrepLM: prep_lm.py splits a text at a line end near the last tenth, and its token files decode,
// through its tokenizer.bin read by package tokenizer, back to the two parts (but for the dummy space
// SentencePiece puts in front, which the decoder drops at the start as run.c does after BOS).
func TestPrepLM(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the peers take seconds")
	}
	if err := exec.Command(python, "-c", "import sentencepiece, numpy").Run(); err != nil {
		t.Skipf("%s cannot import sentencepiece and numpy (apt-get install python3-sentencepiece python3-numpy): %v", python, err)
	}
	text, err := os.ReadFile(filepath.Join("..", "data", "Jane.Austen-Pride.and.Prejudice.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text = text[:60000]
	dir := t.TempDir()
	src := filepath.Join(dir, "text.txt")
	if err := os.WriteFile(src, text, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(python, filepath.Join("peers", "prep_lm.py"), src, dir, "--vocab", "512").CombinedOutput()
	if err != nil {
		t.Fatalf("prep_lm.py: %v\n%s", err, out)
	}
	var rec struct {
		Split int `json:"split_byte"`
		Vocab int `json:"vocab"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if rec.Split < 54000 || rec.Split > 60000 || text[rec.Split-1] != '\n' || rec.Vocab != 512 {
		t.Fatalf("split at byte %d (the byte before: %q), vocab %d: want just after the first newline past byte 54000", rec.Split, text[rec.Split-1], rec.Vocab)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "tokenizer.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range []struct {
		file string
		want []byte
	}{{"train.bin", text[:rec.Split]}, {"val.bin", text[rec.Split:]}} {
		ids, err := tokenizer.LoadTokens(filepath.Join(dir, part.file), 512)
		if err != nil {
			t.Fatal(err)
		}
		got, err := tok.Decode(ids)
		if err != nil {
			t.Fatal(err)
		}
		if got = strings.TrimPrefix(got, " "); got != string(part.want) {
			t.Errorf("%s decodes to %d bytes, not the %d of its part (first difference at byte %d)",
				part.file, len(got), len(part.want), firstDiff(got, string(part.want)))
		}
	}
}

// firstDiff is the index of the first byte where a and b differ (the shorter's length if one is a prefix).
func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
