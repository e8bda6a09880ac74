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
	args := func(steps int) []string {
		return []string{"--train", filepath.Join(dir, "train.bin"), "--val", filepath.Join(dir, "val.bin"),
			"--tokenizer", filepath.Join(dir, "tok.bin"), "--vocab", "8", "--dim", "32", "--layers", "2",
			"--heads", "4", "--kv-heads", "2", "--seq", "16", "--batch", "4", "--warmup", "5", "--lr", "3e-3",
			"--steps", strconv.Itoa(steps)}
	}
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
