package scripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/cpu"
)

// The promise of the README's determinism paragraph: the same script, seed, binary, machine, BLAS and
// core, and GOMAXPROCS give the same bits under any load. TestSameBitsUnderLoad checks it for the
// language model and the layer, once per BLAS core this machine can run (OpenBLAS fixes its core when
// it loads, so each run is a process of its own), while another process keeps a core busy: a product
// split over the cores that happen to be free, or a queued product run whole or split as the script
// happens to wait, gives other bits under OpenBLAS's Haswell kernels, and this test then fails.

const (
	sameBitsDirEnv = "ANESTAR_SAMEBITS_DIR" // set for TestSameBitsChild: the folder its runs write to
	spinEnv        = "ANESTAR_SPIN_CHILD"   // set for TestSpinChild: how long it keeps a core busy
)

// sameBitsLM and sameBitsLayer are the runs compared: sizes whose products are large enough to be split
// over the cores (cpu's splitFLOPs), validation and loss scaling included, a few steps.
func sameBitsLM(dir string) map[string]string {
	return map[string]string{
		"dim": "128", "layers": "2", "heads": "4", "kv_heads": "2", "hidden": "384", "vocab": "512",
		"seq": "64", "batch": "4", "steps": "6", "warmup": "2", "eval_every": "3", "ckpt_every": "100",
		"ckpt": quote(filepath.Join(dir, "lm.safetensors")), "metrics": quote(filepath.Join(dir, "lm.jsonl")),
	}
}

func sameBitsLayer(dir string) map[string]string {
	return map[string]string{
		"dim": "256", "hidden": "512", "heads": "4", "seq": "128", "steps": "10", "accum": "5",
		"ckpt": quote(filepath.Join(dir, "layer.safetensors")), "metrics": quote(filepath.Join(dir, "layer.jsonl")),
	}
}

// TestSameBitsChild is the process TestSameBitsUnderLoad starts for each run; alone it does nothing.
// It trains both models into the folder named by sameBitsDirEnv and records the BLAS it ran on.
func TestSameBitsChild(t *testing.T) {
	dir := os.Getenv(sameBitsDirEnv)
	if dir == "" {
		t.Skip("run by TestSameBitsUnderLoad")
	}
	for _, run := range []struct {
		script string
		params map[string]string
	}{{"train_lm.star", sameBitsLM(dir)}, {"train_layer.star", sameBitsLayer(dir)}} {
		var out bytes.Buffer
		if _, err := builtins.Run(context.Background(), builtins.Config{
			Script: run.script, Backend: emulator.New(emulator.Options{}), Params: run.params,
			Stdout: &out, Argv: []string{"run", run.script},
		}); err != nil {
			t.Fatalf("%s: %v\n%s", run.script, err, out.String())
		}
	}
	info := cpu.CurrentBLASInfo()
	if err := os.WriteFile(filepath.Join(dir, "blas.txt"), []byte(info.Name+" "+info.Core), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpinChild keeps one core busy for the time spinEnv gives (at most 20 minutes, should nobody end
// it), for TestSameBitsUnderLoad, which kills it when it is done; alone it does nothing.
func TestSpinChild(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(spinEnv))
	if err != nil {
		t.Skip("run by TestSameBitsUnderLoad")
	}
	x := 1.0
	for end := time.Now().Add(min(d, 20*time.Minute)); time.Now().Before(end); {
		for range 1 << 20 {
			x = x*1.0000001 + 1e-9
		}
	}
	if x == 0 {
		t.Log(x)
	}
}

func TestSameBitsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("trains each model twice per BLAS core")
	}
	spin := exec.Command(os.Args[0], "-test.run=^TestSpinChild$")
	spin.Env = append(os.Environ(), spinEnv+"=10m")
	if err := spin.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spin.Process.Kill(); spin.Wait() })

	type blas struct{ name, env, core string }
	runs := []blas{{"gonum", "ANESTAR_BLAS=gonum", ""}}
	if _, err := cpu.LoadBLAS("openblas"); err != nil {
		t.Logf("OpenBLAS's cores are not tested: %v", err)
	} else {
		for _, core := range cpu.OpenBLASCores() {
			runs = append(runs, blas{"openblas-" + core, "OPENBLAS_CORETYPE=" + core, core})
		}
	}
	for _, b := range runs {
		t.Run(b.name, func(t *testing.T) {
			var dirs [2]string
			for i := range dirs {
				dirs[i] = t.TempDir()
				child := exec.Command(os.Args[0], "-test.run=^TestSameBitsChild$", "-test.v")
				child.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
					return strings.HasPrefix(kv, "OPENBLAS_CORETYPE=") || strings.HasPrefix(kv, "ANESTAR_BLAS=")
				}), sameBitsDirEnv+"="+dirs[i], b.env)
				if out, err := child.CombinedOutput(); err != nil {
					t.Fatalf("run %d: %v\n%s", i+1, err, out)
				}
				ran, err := os.ReadFile(filepath.Join(dirs[i], "blas.txt"))
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.TrimSuffix("openblas "+b.core, " "); b.core != "" && !strings.EqualFold(string(ran), want) {
					t.Skipf("OPENBLAS_CORETYPE=%s ran %q: this OpenBLAS does not offer that core", b.core, ran)
				}
			}
			for _, f := range []string{"lm.jsonl", "layer.jsonl"} {
				a, b := sameBitsRecords(t, filepath.Join(dirs[0], f)), sameBitsRecords(t, filepath.Join(dirs[1], f))
				if len(a) == 0 || !slices.Equal(a, b) {
					t.Errorf("%s differs between two identical runs:\n%s", f, firstDiff(a, b))
				}
			}
			for _, f := range []string{"lm.safetensors", "layer.safetensors"} {
				sameBitsTensors(t, f, filepath.Join(dirs[0], f), filepath.Join(dirs[1], f))
			}
		})
	}
}

// sameBitsRecords reads a metrics file as one line per record with its timings (ms, tokens_per_s)
// left out: every other value (loss, lr, loss_scale, val_loss, val_bpb, ...) as written, to the last bit.
func sameBitsRecords(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		delete(rec, "ms")
		delete(rec, "tokens_per_s")
		line, _ := json.Marshal(rec) // sorted keys, the numbers' text as written
		recs = append(recs, string(line))
	}
	return recs
}

// firstDiff names the first record where a and b differ.
func firstDiff(a, b []string) string {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			at := func(r []string) string {
				if i < len(r) {
					return r[i]
				}
				return "(none)"
			}
			return fmt.Sprintf("record %d:\n  %s\n  %s", i+1, at(a), at(b))
		}
	}
	return "(no records)"
}

// sameBitsTensors fails unless the checkpoints at pa and pb hold the same tensors, byte for byte.
func sameBitsTensors(t *testing.T, name, pa, pb string) {
	t.Helper()
	a, err := ckpt.Load(pa)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ckpt.Load(pb)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tensors) == 0 || len(a.Tensors) != len(b.Tensors) {
		t.Fatalf("%s: %d and %d tensors", name, len(a.Tensors), len(b.Tensors))
	}
	var differ []string
	for k, ta := range a.Tensors {
		if tb, ok := b.Tensors[k]; !ok || !bytes.Equal(ta.Data, tb.Data) || !slices.Equal(ta.Shape, tb.Shape) {
			differ = append(differ, k)
		}
	}
	slices.Sort(differ)
	if len(differ) > 0 {
		t.Errorf("%s: %d of %d tensors differ between two identical runs: %s", name, len(differ), len(a.Tensors),
			strings.Join(differ[:min(len(differ), 6)], ", "))
	}
}
