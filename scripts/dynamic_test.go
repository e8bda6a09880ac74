package scripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"go.starlark.net/starlark"
)

// dynRun runs a script on the emulator with parameter overrides and returns its result and output.
func dynRun(t *testing.T, cfg builtins.Config) (*builtins.Result, string) {
	t.Helper()
	var out bytes.Buffer
	cfg.Stdout = &out
	if cfg.BackendName == "" {
		cfg.BackendName = "emulator"
	}
	res, err := builtins.Run(context.Background(), cfg)
	if err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatalf("%s\noutput:\n%s", ee.Backtrace(), out.String())
		}
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	return res, out.String()
}

var dynSmall = map[string]string{"dim": "64", "hidden": "128", "heads": "4", "seq": "32"}

// dynStep is one line of a training script's metrics file.
type dynStep struct {
	Step     int     `json:"step"`
	Loss     float64 `json:"loss"`
	Ms       float64 `json:"ms"`
	Compiles int     `json:"compiles"`
}

// dynTrain runs script at the small sizes with the settings set (values as on the command line) and
// its checkpoint and metrics in dir under the names ckptName and ckptName+".jsonl"; it returns the
// metrics lines and the output.
func dynTrain(t *testing.T, script, dir, ckptName string, resume bool, set ...string) ([]dynStep, string) {
	t.Helper()
	params := map[string]string{}
	for k, v := range dynSmall {
		params[k] = v
	}
	for i := 0; i+1 < len(set); i += 2 {
		params[set[i]] = set[i+1]
	}
	path := filepath.Join(dir, ckptName)
	params["ckpt"] = fmt.Sprintf("%q", path)
	params["metrics"] = fmt.Sprintf("%q", path+".jsonl")
	_, out := dynRun(t, builtins.Config{Script: script, Params: params, Resume: resume, Seed: 1})
	f, err := os.Open(path + ".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var steps []dynStep
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s dynStep
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		steps = append(steps, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return steps, out
}

// TestDynCompilesOnce checks that the compile count never grows after the kernels are built: every
// metrics line over several optimizer updates has the count of the first.
func TestDynCompilesOnce(t *testing.T) {
	steps, out := dynTrain(t, "dynamic.star", t.TempDir(), "ck", false, "steps", "12", "accum", "3")
	if len(steps) != 12 {
		t.Fatalf("%d metrics lines, want 12", len(steps))
	}
	first := steps[0].Compiles
	if first != 4 {
		t.Errorf("step 0: %d compiles, want the 4 kernels", first)
	}
	for i, s := range steps {
		if s.Step != i+1 || s.Compiles != first {
			t.Errorf("line %d: step %d, %d compiles; want step %d, %d compiles", i, s.Step, s.Compiles, i+1, first)
		}
	}
	if !strings.Contains(out, "Compiles:        4 at the start, 0 since") {
		t.Errorf("the report does not say 0 compiles since the start:\n%s", out)
	}
	if !(steps[11].Loss < 0.8*steps[0].Loss) {
		t.Errorf("the loss went from %g to %g in 4 updates; want it to fall by a fifth", steps[0].Loss, steps[11].Loss)
	}
}

// TestDynMatchesTrainLayer trains the same layer from the same weights and data with baked-in weights
// (train_layer.star) and with dynamic weights: the losses of every step agree to fp16 accuracy. The
// two differ only in rounding: train_layer does RMSNorm and the SiLU backward in fp16 inside kernels,
// dynamic.star on the host in fp32; both multiply fp16 values with fp32 sums.
func TestDynMatchesTrainLayer(t *testing.T) {
	dir := t.TempDir()
	set := []string{"steps", "24", "accum", "3"} // 8 optimizer updates
	dyn, _ := dynTrain(t, "dynamic.star", dir, "dyn", false, set...)
	ref, _ := dynTrain(t, "train_layer.star", dir, "ref", false, set...)
	if len(dyn) != 24 || len(ref) != 24 {
		t.Fatalf("%d and %d metrics lines, want 24", len(dyn), len(ref))
	}
	const tol = 1e-3 // relative; measured 2.2e-4 here. Losing the rms1 gradient alone makes 3e-3.
	worst := 0.0
	for i := range dyn {
		d := math.Abs(dyn[i].Loss-ref[i].Loss) / ref[i].Loss
		if !(d <= tol) {
			t.Errorf("step %d: loss %g, train_layer %g (relative difference %.2g > %g)", i, dyn[i].Loss, ref[i].Loss, d, tol)
		}
		worst = math.Max(worst, d)
	}
	t.Logf("largest relative loss difference over 24 steps: %.2g", worst)
	if !(ref[23].Loss < 0.8*ref[0].Loss) {
		t.Errorf("train_layer's loss went from %g to %g: the comparison needs a falling loss", ref[0].Loss, ref[23].Loss)
	}
}

// TestDynResume stops a run after 6 steps (2 optimizer updates), resumes it to 12, and checks the
// losses and the final checkpoint against an uninterrupted run's, bit for bit.
func TestDynResume(t *testing.T) {
	dir := t.TempDir()
	whole, _ := dynTrain(t, "dynamic.star", dir, "whole", false, "steps", "12", "accum", "3")
	first, _ := dynTrain(t, "dynamic.star", dir, "split", false, "steps", "6", "accum", "3")
	both, out := dynTrain(t, "dynamic.star", dir, "split", true, "steps", "12", "accum", "3")
	if len(first) != 6 || len(both) != 12 {
		t.Fatalf("%d then %d metrics lines, want 6 then 12", len(first), len(both))
	}
	if !strings.Contains(out, "[resumed at step 6") {
		t.Errorf("the second run did not say it resumed at step 6:\n%s", out)
	}
	for i := range whole {
		if both[i].Step != whole[i].Step || both[i].Loss != whole[i].Loss {
			t.Errorf("line %d: step %d loss %v, uninterrupted step %d loss %v", i, both[i].Step, both[i].Loss, whole[i].Step, whole[i].Loss)
		}
	}
	a, err := ckpt.Load(filepath.Join(dir, "whole"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ckpt.Load(filepath.Join(dir, "split"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tensors) != 30 { // 9 weights, Adam's m and v of each, step, optimizer steps, generator
		t.Errorf("the checkpoint holds %d tensors, want 30", len(a.Tensors))
	}
	for name, ta := range a.Tensors {
		tb, ok := b.Tensors[name]
		if !ok || !bytes.Equal(ta.Data, tb.Data) {
			t.Errorf("tensor %s differs after the resume", name)
		}
	}
	for _, k := range []string{"step", "optim_steps", "batches", "loss"} {
		if a.Metadata[k] != b.Metadata[k] {
			t.Errorf("metadata %s: %s after the resume, %s uninterrupted", k, b.Metadata[k], a.Metadata[k])
		}
	}
}

// TestDynDryRun checks that a dry run builds and checks all nine kernels and trains nothing.
func TestDynDryRun(t *testing.T) {
	dir := t.TempDir()
	params := map[string]string{"metrics": fmt.Sprintf("%q", filepath.Join(dir, "m.jsonl"))}
	for k, v := range dynSmall {
		params[k] = v
	}
	res, out := dynRun(t, builtins.Config{Script: "dynamic.star", Params: params, DryRun: true})
	if len(res.Checked) != 4 {
		t.Errorf("%d programs checked, want 4", len(res.Checked))
	}
	if !strings.Contains(out, "dry run: 4 kernels") {
		t.Errorf("output:\n%s", out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "m.jsonl")); err == nil && len(b) > 0 {
		t.Errorf("a dry run wrote metrics:\n%s", b)
	}
}
