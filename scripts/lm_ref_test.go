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
	"github.com/anestar/anestar/npy"
	"go.starlark.net/starlark"
)

// lmTol are the bounds of one numerics mode, each relative to the reference tensor's largest magnitude.
type lmTol struct {
	logits, loss, grad, curve float64
}

// TestLMAgainstPyTorch runs scripts/lib/lm.star's model (kernels, host math, optimizer step) on the
// PyTorch reference written by testdata/lm_ref/gen.py (float64, from the formulas): logits, loss, every
// parameter's gradient and the losses of ten AdamW steps with clipping and the schedule.
func TestLMAgainstPyTorch(t *testing.T) {
	for _, c := range []struct {
		name, nseq string
		mode       emulator.Numerics
		scale      string
		tol        lmTol
	}{
		// fp32: nothing rounds to fp16; the differences are float32 against float64 (measured: logits and
		// gradients about 1e-6, the curve 4e-8).
		{"fp32", "2", emulator.FP32, "1.0", lmTol{logits: 1e-4, loss: 1e-4, grad: 1e-5, curve: 1e-4}},
		{"fp32_one_sequence_per_eval", "1", emulator.FP32, "1.0", lmTol{logits: 1e-4, loss: 1e-4, grad: 1e-5, curve: 1e-4}},
		// The backward's weight products one per gradient, not one per block of lm_grads.
		{"fp32_gradient_by_gradient", "2", emulator.FP32, "1.0", lmTol{logits: 1e-4, loss: 1e-4, grad: 1e-5, curve: 1e-4}},
		// fp16: every kernel op rounds to fp16 (a relative step of 2^-11), the loss gradient scaled by 1024
		// (measured: logits 2e-3, gradients up to 3e-3, the curve 7e-5).
		{"fp16", "2", emulator.FP16, "1024.0", lmTol{logits: 1e-2, loss: 1e-4, grad: 1e-2, curve: 1e-3}},
		// The two sequences on two streams of kernels, side by side (kernel.start), their weight
		// products one stream's columns at a time.
		{"fp32_two_streams", "2", emulator.FP32, "1.0", lmTol{logits: 1e-4, loss: 1e-4, grad: 1e-5, curve: 1e-4}},
		{"fp16_two_streams", "2", emulator.FP16, "1024.0", lmTol{logits: 1e-2, loss: 1e-4, grad: 1e-2, curve: 1e-3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			params := map[string]string{"loss_scale": c.scale, "nseq": c.nseq}
			if c.name == "fp32_gradient_by_gradient" {
				params["grad_blocks"] = "False"
			}
			if strings.HasSuffix(c.name, "_two_streams") {
				params["streams"] = "2"
			}
			res := runLMRef(t, c.mode, params)
			ref := func(name string) []float32 { return readNpy(t, filepath.Join("testdata", "lm_ref", name+".npy")) }
			compareRel(t, "logits", tensorData(t, res.Globals["logits"]), ref("logits"), c.tol.logits)
			loss, _ := starlark.AsFloat(res.Globals["loss"])
			compareRel(t, "loss", []float32{float32(loss)}, ref("loss"), c.tol.loss)
			compareGrads(t, res, ref, c.tol.grad, 2+2*9)
			if stale, ok := res.Globals["stale"].(*starlark.List); !ok || stale.Len() != 0 {
				t.Errorf("a second step's gradients differ from a fresh trainer's on its batch: %v", res.Globals["stale"])
			}
			curve, ok := res.Globals["curve"].(*starlark.List)
			if !ok || curve.Len() != 10 {
				t.Fatalf("curve is %v, want a list of 10 losses", res.Globals["curve"])
			}
			want := ref("curve")
			for i := range curve.Len() {
				l, ok := starlark.AsFloat(curve.Index(i))
				if !ok {
					t.Fatalf("step %d: loss %v (skipped?)", i, curve.Index(i))
				}
				d := math.Abs(l - float64(want[i]))
				if d > c.tol.curve*math.Abs(float64(want[i])) {
					t.Errorf("step %d: loss %.6f, PyTorch %.6f (relative %.2g > %g)", i, l, want[i], d/float64(want[i]), c.tol.curve)
				}
			}
		})
	}
}

// TestLMCompileCount checks that the kernels compile once for any depth: one binding per layer.
func TestLMCompileCount(t *testing.T) {
	count := func(layers string, streams string) int {
		res := runLMRef(t, emulator.FP32, map[string]string{"layers": layers, "count_only": "True", "streams": streams})
		n, err := starlark.AsInt32(res.Globals["compiles"])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if two, six := count("2", "1"), count("6", "1"); two != six || two != 4 {
		t.Errorf("compiles: %d for 2 layers, %d for 6; want 4 for both", two, six)
	}
	if two := count("2", "2"); two != 8 { // each stream's kernels
		t.Errorf("compiles on two streams: %d, want 8", two)
	}
}

// TestLMDropoutGradients checks the gradient of the loss with dropout against finite differences
// (fp32 mode, the same masks for every evaluation), at each tested tensor's largest gradient entry.
func TestLMDropoutGradients(t *testing.T) {
	res := runLMRef(t, emulator.FP32, map[string]string{"dropout": "0.2", "fd": "True"})
	fd, ok := res.Globals["fd"].(*starlark.List)
	if !ok || fd.Len() == 0 {
		t.Fatalf("fd is %v", res.Globals["fd"])
	}
	for i := range fd.Len() {
		row := fd.Index(i).(*starlark.List)
		name, _ := starlark.AsString(row.Index(0))
		g, _ := starlark.AsFloat(row.Index(2))
		num, _ := starlark.AsFloat(row.Index(3))
		// h = 1e-2 and 5e-3, extrapolated: the float32 forward's rounding (about 1e-6 of a loss of 5.7) over 2h.
		t.Logf("%s[%v]: gradient %.6g, finite difference %.6g", name, row.Index(1), g, num)
		if math.Abs(g-num) > 0.005*math.Abs(g)+2e-5 {
			t.Errorf("%s[%v]: gradient %.6g, finite difference %.6g", name, row.Index(1), g, num)
		}
	}
}

func runLMRef(t *testing.T, mode emulator.Numerics, params map[string]string) *builtins.Result {
	t.Helper()
	var out strings.Builder
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script: "testdata/lm_ref.star", Backend: emulator.New(emulator.Options{Numerics: mode}),
		Params: params, Stdout: &out,
	})
	if err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatalf("%s\noutput:\n%s", ee.Backtrace(), out.String())
		}
		t.Fatalf("%v\noutput:\n%s", err, out.String())
	}
	return res
}

func readNpy(t *testing.T, path string) []float32 {
	t.Helper()
	a, err := npy.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return a.Data
}

func tensorData(t *testing.T, v starlark.Value) []float32 {
	t.Helper()
	x, ok := v.(*builtins.Tensor)
	if !ok {
		t.Fatalf("got %v, want a tensor", v)
	}
	return x.Data()
}

// compareRel fails when got and want differ in length or when max|got - want| > tol * max|want|.
func compareRel(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var dmax, wmax float64
	at := 0
	for i := range want {
		if d := math.Abs(float64(got[i]) - float64(want[i])); d > dmax || d != d {
			dmax, at = d, i
		}
		wmax = math.Max(wmax, math.Abs(float64(want[i])))
	}
	if !(dmax <= tol*wmax) {
		t.Errorf("%s: max difference %.3g at %d (got %g, want %g) is %.3g of the largest magnitude %.3g, bound %g",
			what, dmax, at, got[at], want[at], dmax/wmax, wmax, tol)
	}
}

// TestLMVariantsAgainstPyTorch runs the variants of docs/model-variants.md on their PyTorch references
// (testdata/lm_ref/gen.py VARIANT: the same tokens and weights, float64 autograd): the loss and every
// parameter's gradient, in both numerics and within TestLMAgainstPyTorch's tolerances.
func TestLMVariantsAgainstPyTorch(t *testing.T) {
	for _, variant := range []string{"qk_norm", "parallel", "gpt2"} {
		for _, c := range []struct {
			mode  emulator.Numerics
			scale string
			tol   lmTol
		}{
			{emulator.FP32, "1.0", lmTol{loss: 1e-4, grad: 1e-5}},
			{emulator.FP16, "1024.0", lmTol{loss: 1e-4, grad: 1e-2}},
		} {
			t.Run(fmt.Sprintf("%s/numerics%d", variant, c.mode), func(t *testing.T) {
				res := runLMRef(t, c.mode, map[string]string{"loss_scale": c.scale, variant: "True", "steps": "1"})
				ref := func(name string) []float32 {
					return readNpy(t, filepath.Join("testdata", "lm_ref", variant, name+".npy"))
				}
				loss, _ := starlark.AsFloat(res.Globals["loss"])
				compareRel(t, "loss", []float32{float32(loss)}, ref("loss"), c.tol.loss)
				want, tol := 2+2*9, c.tol.grad // emb, norm and each layer's
				if variant == "gpt2" {
					want = 3 + 2*8 // wpe besides; no w3
					// The kernel's GELU constants are fp16 values, as any constant of an fp16 program
					// (0.044708 for 0.044715, 0.79785 for sqrt(2/pi)): 1-3e-5 of the largest gradient
					// in fp32 numerics; with PyTorch's GELU given those constants, under 1e-5.
					tol = max(tol, 5e-5)
				}
				compareGrads(t, res, ref, tol, want)
			})
		}
	}
}

// compareGrads compares the gradients lm_ref.star leaves in grads with the reference's g_NAME files.
func compareGrads(t *testing.T, res *builtins.Result, ref func(string) []float32, tol float64, want int) {
	t.Helper()
	grads := tensorDict(t, res, "grads")
	if len(grads) != want {
		t.Fatalf("%d gradients, want %d", len(grads), want)
	}
	for k, g := range grads {
		compareRel(t, "gradient of "+k, g.Data(), ref("g_"+k), tol)
	}
}
