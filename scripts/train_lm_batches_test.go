package scripts

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/npy"
)

// refStart writes testdata/lm_ref's start (testdata/lm_ref_start.star) under dir and returns its prefix.
func refStart(t *testing.T, dir string) string {
	t.Helper()
	prefix := filepath.Join(dir, "start")
	var out strings.Builder
	if _, err := builtins.Run(context.Background(), builtins.Config{
		Script: "testdata/lm_ref_start.star", Backend: emulator.New(emulator.Options{}),
		Params: map[string]string{"out": quote(prefix)}, Stdout: &out,
	}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return prefix
}

// refCurveParams are train_lm.star's parameters of testdata/lm_ref's curve (gen.py's hyperparameters)
// from its start: the sizes come from the init file's header.
func refCurveParams(dir, prefix string, kv ...string) map[string]string {
	tok := quote("testdata/lm_ref/tokens.bin")
	m := map[string]string{
		"data": tok, "val_data": tok, "init": quote(prefix + ".bin"), "batches": quote(prefix + ".batches.npy"),
		"seq": "32", "batch": "2", "steps": "10", "lr": "3e-3", "min_lr": "3e-4", "warmup": "3", "weight_decay": "0.1",
		"clip": "1.0", "dropout": "0.0", "eval_every": "0", "ckpt": `""`, "best": `""`,
		"metrics": quote(filepath.Join(dir, "curve.jsonl")),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// TestTrainLMAgainstPyTorchCurve trains train_lm.star itself (not a test harness of its parts) from the
// PyTorch reference's initial weights on its batches, given as init and batches: the losses of its ten
// steps are the reference's (float64, gen.py), whatever the seed, in fp32 to float32's rounding and in
// fp16 to the kernels' (the dynamic loss scale skips no step here); and so are the weights after them,
// exported, which the losses alone hardly tell from a run without weight decay.
func TestTrainLMAgainstPyTorchCurve(t *testing.T) {
	dir := t.TempDir()
	prefix := refStart(t, dir)
	want, err := npy.ReadFile(filepath.Join("testdata", "lm_ref", "curve.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		mode emulator.Numerics
		seed string
		tol  float64
		wtol float64 // of the final weights, relative to each tensor's largest magnitude
	}{
		// fp16: Adam moves a weight by about lr whatever its gradient's size, so an entry that fp16 rounds
		// near zero (a rare token's embedding) can move otherwise: measured 0.025 of emb's largest magnitude,
		// 2e-3 absolute against the 0.03 that ten steps of lr 3e-3 can move a weight. A run without weight
		// decay is 2e-3 off in fp32.
		{"fp32", emulator.FP32, "42", 1e-4, 1e-4},
		{"fp32_other_seed", emulator.FP32, "5", 1e-4, 1e-4},
		{"fp16", emulator.FP16, "42", 1e-3, 5e-2},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := filepath.Join(dir, c.name+".bin")
			p := refCurveParams(dir, prefix, "seed", c.seed, "export", quote(exp))
			var out strings.Builder
			if _, err := builtins.Run(context.Background(), builtins.Config{
				Script: "train_lm.star", Backend: emulator.New(emulator.Options{Numerics: c.mode}), Params: p, Stdout: &out,
			}); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			var got []float64
			for _, r := range readJSONL(t, filepath.Join(dir, "curve.jsonl")) {
				if v, ok := r["loss"].(float64); ok {
					got = append(got, v)
				}
			}
			if len(got) != len(want.Data) {
				t.Fatalf("%d step losses, want the reference's %d:\n%s", len(got), len(want.Data), out.String())
			}
			for i, w := range want.Data {
				if d := math.Abs(got[i]-float64(w)) / float64(w); d > c.tol {
					t.Errorf("step %d: loss %.6f, PyTorch %.6f (relative %.2g > %g)", i+1, got[i], w, d, c.tol)
				}
			}
			m, err := ckpt.ReadLlama2(exp)
			if err != nil {
				t.Fatal(err)
			}
			for name, ln := range refLlama2Names(m.Config.Layers) {
				compareRel(t, "final "+name, m.Weights[ln], readNpy(t, filepath.Join("testdata", "lm_ref", "final_"+name+".npy")), c.wtol)
			}
		})
	}
}

// refLlama2Names maps lm.star's weight names to llama2.c's (scripts/lib/lm_llama2.star's llama2_names,
// the classifier tied).
func refLlama2Names(layers int) map[string]string {
	m := map[string]string{"emb": "tok_embeddings.weight", "norm": "norm.weight"}
	for l := range layers {
		pre, lp := fmt.Sprintf("L%d.", l), fmt.Sprintf("layers.%d.", l)
		m[pre+"rms1"], m[pre+"rms2"] = lp+"attention_norm.weight", lp+"ffn_norm.weight"
		for _, w := range []string{"wq", "wk", "wv", "wo"} {
			m[pre+w] = lp + "attention." + w + ".weight"
		}
		for _, w := range []string{"w1", "w2", "w3"} {
			m[pre+w] = lp + "feed_forward." + w + ".weight"
		}
	}
	return m
}

// TestTrainLMBatchesBad: a batches file of the wrong shape, with offsets outside the training tokens or
// not whole, too short for steps, or with a budget, is refused with the file named and the fix.
func TestTrainLMBatchesBad(t *testing.T) {
	dir := t.TempDir()
	prefix := refStart(t, dir)
	write := func(name string, shape []int, data []float32) string {
		path := filepath.Join(dir, name+".npy")
		if err := npy.WriteFile(path, &npy.Array{Shape: shape, Data: data}); err != nil {
			t.Fatal(err)
		}
		return quote(path)
	}
	rows := func(v float32) []float32 {
		d := make([]float32, 20)
		for i := range d {
			d[i] = v
		}
		return d
	}
	for _, c := range []struct {
		name string
		kv   []string
		want string
	}{
		{"wide", []string{"batches", write("wide", []int{5, 4}, rows(0))}, "want [steps, batch x accum] = [at least 10, 2]"},
		{"short", []string{"batches", write("short", []int{10, 2}, rows(0)), "steps", "11"}, "want [steps, batch x accum] = [at least 11, 2]"},
		{"beyond", []string{"batches", write("beyond", []int{10, 2}, rows(3968))}, "must lie in [0, 3967)"},
		{"negative", []string{"batches", write("negative", []int{10, 2}, rows(-1))}, "must lie in [0, 3967)"},
		{"fraction", []string{"batches", write("fraction", []int{10, 2}, rows(2.5))}, "is not a whole number"},
		{"budget", []string{"budget", "30"}, "give steps instead"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, out, err := runLM(t, refCurveParams(dir, prefix, c.kv...), false)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "batches = ") {
				t.Errorf("got %v, want an error naming batches and %q\n%s", err, c.want, out)
			}
		})
	}
}
