package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/npy"
)

// startSizes are lmSizes at a window the kernels take (train_lm.star's seq is a multiple of 32).
func startSizes(dir string) []string {
	s := lmSizes(dir)
	for i := range s {
		if s[i] == "--seq" {
			s[i+1] = "32"
		}
	}
	return s
}

// writeStart has the LM peer write the start of the run of args at prefix.
func writeStart(t *testing.T, prefix string, args []string) {
	t.Helper()
	cmd := exec.Command(python, append([]string{filepath.Join("peers", "torch_lm.py"), "--write-start", prefix}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("--write-start: %v\n%s", err, out)
	}
}

// TestLMPeerStart: --write-start writes the run's initial weights as a llama2.c file of its sizes (the
// peer's init: normal 0.02, the residual projections 0.02/sqrt(2 layers), gains ones) and its batches'
// offsets; a run from them (--init, --batches) is the run that wrote them, whatever its seed; a start of
// other sizes is refused.
func TestLMPeerStart(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	lmFiles(t, dir)
	prefix := filepath.Join(dir, "start")
	args := append(startSizes(dir), "--steps", "30")
	writeStart(t, prefix, append(slices.Clone(args), "--seed", "3"))
	m, err := ckpt.ReadLlama2(prefix + ".bin")
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Dim != 32 || c.Hidden != 96 || c.Layers != 2 || c.Heads != 4 || c.KVHeads != 2 || c.Vocab != 8 || c.MaxSeqLen != 32 || !c.Shared {
		t.Errorf("config %+v, want dim 32 hidden 96 layers 2 heads 4 kv 2 vocab 8 seq 32, shared", c)
	}
	sd := func(v []float32) float64 {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		return math.Sqrt(ss / float64(len(v)))
	}
	for name, want := range map[string]float64{"tok_embeddings.weight": 0.02, "layers.1.attention.wq.weight": 0.02,
		"layers.0.attention.wo.weight": 0.01, "layers.0.feed_forward.w2.weight": 0.01, "norm.weight": 1} {
		if got := sd(m.Weights[name]); math.Abs(got-want) > 0.15*want {
			t.Errorf("%s: rms %.4f, want about %g", name, got, want)
		}
	}
	b, err := npy.ReadFile(prefix + ".batches.npy")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Shape) != 2 || b.Shape[0] != 30 || b.Shape[1] != 4 {
		t.Fatalf("batches of shape %v, want [30 4]", b.Shape)
	}
	for i, v := range b.Data {
		if v != float32(int(v)) || v < 0 || v >= 4000-33 {
			t.Fatalf("offset %d is %g: want a whole number in [0, %d)", i, v, 4000-33)
		}
	}
	own := peer(t, "torch_lm.py", append(args, "--seed", "3")...)
	from := peer(t, "torch_lm.py", append(args, "--seed", "9", "--init", prefix+".bin", "--batches", prefix+".batches.npy")...)
	if own["train_loss"] != from["train_loss"] || own["val_loss"] != from["val_loss"] {
		t.Errorf("from the start of seed 3 at seed 9: %v; the run of seed 3: %v", from, own)
	}
	for _, bad := range [][]string{{"--init", prefix + ".bin", "--dim", "64", "--heads", "4"}, {"--batches", prefix + ".batches.npy", "--steps", "31"},
		{"--batches", prefix + ".batches.npy", "--budget", "5"}, {"--write-start", prefix, "--init", prefix + ".bin"}} {
		lmRefuses(t, append(slices.Clone(args), bad...))
	}
}

// TestLMSameStartAsAnestar is bench/compare -same-start at a tiny size: from the peer's start, the peer
// and train_lm.star (fp32) train the same model on the same batches, so their losses agree to float32's
// rounding of two sum orders, not to the spread between seeds.
func TestLMSameStartAsAnestar(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	lmFiles(t, dir)
	prefix := filepath.Join(dir, "start")
	const steps = 40
	args := append(startSizes(dir), "--steps", strconv.Itoa(steps), "--seed", "4")
	writeStart(t, prefix, args)
	rec := peer(t, "torch_lm.py", append(args, "--init", prefix+".bin", "--batches", prefix+".batches.npy")...)
	q := strconv.Quote
	metrics := filepath.Join(dir, "m.jsonl")
	var out bytes.Buffer
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script: "../scripts/train_lm.star", Backend: emulator.New(emulator.Options{Numerics: emulator.FP32}), Stdout: &out,
		Params: map[string]string{"data": q(filepath.Join(dir, "train.bin")), "val_data": q(filepath.Join(dir, "val.bin")),
			"tokenizer": q(filepath.Join(dir, "tok.bin")), "init": q(prefix + ".bin"), "batches": q(prefix + ".batches.npy"),
			"batch": "4", "steps": strconv.Itoa(steps), "lr": "3e-3", "min_lr": "3e-4", "warmup": "5", "weight_decay": "0.1",
			"clip": "1.0", "dropout": "0.0", "eval_every": "0", "ckpt": `""`, "best": `""`, "metrics": q(metrics), "seed": "11"},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := -1.0
	lines, err := os.ReadFile(metrics)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var r struct {
			ValLoss *float64 `json:"val_loss"`
		}
		if json.Unmarshal([]byte(l), &r) == nil && r.ValLoss != nil {
			got = *r.ValLoss
		}
	}
	want := num(t, rec, "val_loss")
	if math.Abs(got-want) > 2e-4*want {
		t.Errorf("val_loss after %d steps from the same start: anestar %.4f, the peer %.4f", steps, got, want)
	}
	if !strings.Contains(out.String(), "[initialised from") {
		t.Errorf("no init line:\n%s", out.String())
	}
}
