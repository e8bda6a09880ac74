package scripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/cpu"
	"go.starlark.net/starlark"
)

const trainLayer = "train_layer.star"

// TestGradients checks every weight gradient that one training step of train_layer.star accumulates
// (all 9 tensors: one step, accum 1, so G is that step's gradient) against central differences of the
// loss from testdata/gradcheck.star, both on the emulator in fp32 numerics.
//
// The analytic gradients come from the script's kernels, whose baked weights are fp16 consts (rounded to
// 11 significant bits); the finite differences from the same step on the kernels that take the weights
// as inputs, which fp32 numerics do not round. The tolerance allows for that rounding: |numeric -
// analytic| <= 3% of |analytic| plus 1% of the largest analytic magnitude in that tensor. A wiring
// mistake (a part read for another, a missing transpose, a gradient sent to the wrong weight) is off by
// far more.
func TestGradients(t *testing.T) {
	fp32 := emulator.Options{Numerics: emulator.FP32}
	dir := t.TempDir()
	res, _ := runScript(t, trainLayer, with("steps", "1", "accum", "1", "lr", "0.0",
		"ckpt", quote(filepath.Join(dir, "c.safetensors"))), fp32, false)
	G := tensorDict(t, res, "G")

	num, _ := runScript(t, "testdata/gradcheck.star", with(), fp32, false)
	numeric, ok := num.Globals["numeric"].(*starlark.Dict)
	if !ok {
		t.Fatal("gradcheck.star left no dict numeric")
	}
	if len(G) != 9 || numeric.Len() != 9 {
		t.Fatalf("%d gradients and %d checked tensors, want 9 of each", len(G), numeric.Len())
	}
	for _, name := range sortedKeys(G) {
		g := G[name].Data()
		var gmax float64
		for _, v := range g {
			gmax = max(gmax, math.Abs(float64(v)))
		}
		if gmax == 0 {
			t.Errorf("%s: gradient is all zeros", name)
			continue
		}
		v, found, _ := numeric.Get(starlark.String(name))
		if !found {
			t.Errorf("%s: not checked by gradcheck.star", name)
			continue
		}
		pairs := v.(*starlark.List)
		for j := range pairs.Len() {
			pair := pairs.Index(j).(*starlark.List)
			idx, _ := starlark.AsInt32(pair.Index(0))
			want, err := floatOf(pair.Index(1))
			if err != nil {
				t.Fatal(err)
			}
			got := float64(g[idx])
			if tol := 0.03*math.Abs(got) + 0.01*gmax; math.Abs(got-want) > tol {
				t.Errorf("%s[%d]: analytic %.6g, numeric %.6g (tolerance %.3g)", name, idx, got, want, tol)
			} else {
				t.Logf("%s[%d]: analytic %.6g, numeric %.6g", name, idx, got, want)
			}
		}
	}
}

// TestLossFalls trains the small layer in the ANE's fp16 numerics, one Adam update per step, and
// requires the loss to fall at least fourfold within 40 steps.
func TestLossFalls(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.jsonl")
	res, out := runScript(t, trainLayer, with("steps", "40", "accum", "1", "lr", "1e-3", "max_compiles", "1000",
		"ckpt", quote(filepath.Join(dir, "c.safetensors")), "metrics", quote(m)), emulator.Options{}, false)
	if res.Exec != nil {
		t.Fatalf("restarted with a budget of 1000 compiles: %q", res.Exec)
	}
	recs := readMetrics(t, m)
	if len(recs) != 40 {
		t.Fatalf("%d metrics lines, want 40", len(recs))
	}
	first, last := recs[0].loss, recs[len(recs)-1].loss
	t.Logf("loss %g -> %g in 40 steps", first, last)
	if !(last*4 <= first) {
		t.Errorf("loss %g -> %g in 40 steps, want a fall of at least 4x\n%s", first, last, out)
	}
	for _, want := range []string{"=== Efficiency Report ===", "Total steps:     40 (40 batches)",
		"BLAS: " + cpu.CurrentBLASInfo().String()} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestRestartsReproduce runs a budget so small (8 compiles: two optimizer windows of four kernels) that the script checkpoints and restarts itself twice, and compares its metrics and final
// checkpoint with an uninterrupted run: the same steps once each, bit-identical losses, identical
// weights and Adam state.
func TestRestartsReproduce(t *testing.T) {
	dir := t.TempDir()
	run := func(name, budget string) (string, int) {
		m := filepath.Join(dir, name+".jsonl")
		c := filepath.Join(dir, name+".safetensors")
		p := with("steps", "22", "accum", "4", "max_compiles", budget, "ckpt", quote(c), "metrics", quote(m))
		restarts := 0
		for resume := false; ; resume = true {
			res, out := runScript(t, trainLayer, p, emulator.Options{}, resume)
			if res.Exec == nil {
				break
			}
			if !strings.Contains(strings.Join(res.Exec, " "), "--resume") {
				t.Fatalf("restart without --resume: %q", res.Exec)
			}
			if !strings.Contains(out, "[restart at step") {
				t.Errorf("restart not announced:\n%s", out)
			}
			if restarts++; restarts > 10 {
				t.Fatal("more than 10 restarts")
			}
		}
		return name, restarts
	}
	_, r0 := run("straight", "100")
	_, r1 := run("restarted", "8")
	if r0 != 0 || r1 != 2 {
		t.Fatalf("restarts: %d and %d, want 0 and 2", r0, r1)
	}
	a := readMetrics(t, filepath.Join(dir, "straight.jsonl"))
	b := readMetrics(t, filepath.Join(dir, "restarted.jsonl"))
	if len(a) != 22 || len(b) != 22 {
		t.Fatalf("%d and %d metrics lines, want 22", len(a), len(b))
	}
	for i := range a {
		if a[i].step != i+1 || b[i].step != i+1 { // a line's step is the steps done
			t.Fatalf("line %d: steps %d and %d", i, a[i].step, b[i].step)
		}
		if a[i].lossText != b[i].lossText {
			t.Errorf("step %d: loss %s uninterrupted, %s restarted", i, a[i].lossText, b[i].lossText)
		}
	}
	// Compiles restart from 0 in each process: 4 after the first window, 8 after the second.
	if b[4].compiles != 8 || b[8].compiles != 4 {
		t.Errorf("compiles at steps 5, 9: %d, %d; want 8, 4", b[4].compiles, b[8].compiles)
	}
	fa, err := ckpt.Load(filepath.Join(dir, "straight.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := ckpt.Load(filepath.Join(dir, "restarted.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fa.Tensors) != 9*3+3 {
		t.Errorf("%d tensors in the checkpoint, want 30 (9 weights, their m and v, step, optimizer steps, generator)", len(fa.Tensors))
	}
	for name, ta := range fa.Tensors {
		if tb, ok := fb.Tensors[name]; !ok || !bytes.Equal(ta.Data, tb.Data) {
			t.Errorf("checkpoint tensor %s differs after restarts", name)
		}
	}
	for _, k := range []string{"step", "optim_steps", "batches", "rng"} {
		if fa.Metadata[k] != fb.Metadata[k] {
			t.Errorf("metadata %s: %s uninterrupted, %s restarted", k, fa.Metadata[k], fb.Metadata[k])
		}
	}
}

// TestBadSizes checks the one-line errors for sizes that cannot make a layer.
func TestBadSizes(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{with("dim", "30"), "dim = 30 does not divide by heads = 4: set dim to a multiple of heads (--set dim=32) or heads to a divisor of dim"},
		{with("max_compiles", "3"), "max_compiles = 3 is too small"},
		{with("accum", "0"), "accum must be at least 1"},
	} {
		_, err := builtins.Run(context.Background(), builtins.Config{Script: trainLayer, BackendName: "emulator", Params: tc.set})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.set, err, tc.want)
		}
	}
}

// metric is one line of the metrics file.
type metric struct {
	step, compiles int
	loss           float64
	lossText       string // the number as written, for exact comparison
}

func readMetrics(t *testing.T, path string) []metric {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []metric
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]json.Number
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.UseNumber()
		if err := dec.Decode(&rec); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		step, err1 := rec["step"].Int64()
		comp, err2 := rec["compiles"].Int64()
		loss, err3 := rec["loss"].Float64()
		if _, err4 := rec["ms"].Float64(); err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			t.Fatalf("%s: bad record %s", path, sc.Text())
		}
		out = append(out, metric{step: int(step), compiles: int(comp), loss: loss, lossText: rec["loss"].String()})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDryRun checks that under `anestar check` the script builds and checks all four kernels at the
// reference size and stops before training: no kernel runs, no metrics, no checkpoint.
func TestDryRun(t *testing.T) {
	dir := t.TempDir()
	m, c := filepath.Join(dir, "m.jsonl"), filepath.Join(dir, "c.safetensors")
	var out bytes.Buffer
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script: trainLayer, BackendName: "emulator", DryRun: true, Stdout: &out,
		Params: map[string]string{"metrics": quote(m), "ckpt": quote(c)},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(res.Checked) != 4 {
		t.Errorf("%d programs checked, want 4", len(res.Checked))
	}
	if !strings.Contains(out.String(), "dry run: 4 kernels built") || strings.Contains(out.String(), "Efficiency Report") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, f := range []string{m, c} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("a dry run wrote %s", f)
		}
	}
}

// TestLossScaleUndone checks that loss scaling changes only the fp16 headroom of the backward pass: in
// fp32 numerics a run with loss_scale 1024 follows the unscaled run's loss trajectory closely (scaling by a
// power of two is exact, and the weight gradients are divided back). What differs is the smallest gradient
// values, which are subnormal on the kernels' fp16 surfaces without scaling: that moves the losses by about
// 2e-5 relative here, so the bound is 1e-4.
func TestLossScaleUndone(t *testing.T) {
	fp32 := emulator.Options{Numerics: emulator.FP32}
	dir := t.TempDir()
	run := func(scale string) []metric {
		m := filepath.Join(dir, "m"+scale+".jsonl")
		runScript(t, trainLayer, with("steps", "9", "accum", "3", "loss_scale", scale, "max_compiles", "1000",
			"ckpt", quote(filepath.Join(dir, "c"+scale+".safetensors")), "metrics", quote(m)), fp32, false)
		return readMetrics(t, m)
	}
	plain, scaled := run("1.0"), run("1024.0")
	if len(plain) != 9 || len(scaled) != 9 {
		t.Fatalf("%d and %d metrics lines, want 9 each", len(plain), len(scaled))
	}
	for i := range plain {
		if d := math.Abs(plain[i].loss-scaled[i].loss) / plain[i].loss; d > 1e-4 {
			t.Errorf("step %d: loss %g unscaled, %g with loss_scale 1024 (relative difference %.2g)",
				i, plain[i].loss, scaled[i].loss, d)
		}
	}
	if plain[8].loss >= plain[0].loss {
		t.Errorf("loss did not fall: %g -> %g", plain[0].loss, plain[8].loss)
	}
}
