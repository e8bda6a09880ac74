package scripts

import (
	"math"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
)

// TestGradScriptMatchesPyTorch runs grad.star, whose backward comes from mil.grad, in the strict mode
// (inputs and outputs packed, fed and read by name) on the PyTorch reference of testdata/grad_ref (gen.py:
// float64 autograd of the same formulas), and compares y, d_x and d_w: within 1e-4 of the largest in fp32
// numerics, 3e-2 in the ANE's fp16.
func TestGradScriptMatchesPyTorch(t *testing.T) {
	for _, c := range []struct {
		mode emulator.Numerics
		tol  float64
	}{{emulator.FP32, 1e-4}, {emulator.FP16, 3e-2}} {
		res, out := runScript(t, "grad.star", map[string]string{"ref": quote("testdata/grad_ref")}, emulator.Options{Numerics: c.mode}, false)
		if !strings.Contains(out, "packed into (1, 8, 1, 64)") {
			t.Errorf("the forward's inputs were not packed: %s", out)
		}
		for _, v := range []struct{ global, ref string }{{"Y", "y"}, {"D_X", "dx"}, {"D_W", "dw"}} {
			got := tensorData(t, res.Globals[v.global])
			want := readNpy(t, "testdata/grad_ref/"+v.ref+".npy")
			if len(got) != len(want) {
				t.Fatalf("%s has %d values, want %d", v.global, len(got), len(want))
			}
			scale := 0.0
			for _, w := range want {
				scale = max(scale, math.Abs(float64(w)))
			}
			worst := 0.0
			for i := range want {
				worst = max(worst, math.Abs(float64(got[i])-float64(want[i]))/scale)
			}
			t.Logf("numerics %d: %s within %.2g of the largest (%.4g)", c.mode, v.global, worst, scale)
			if worst > c.tol {
				t.Errorf("numerics %d: %s differs from PyTorch by %.3g of the largest, want <= %g", c.mode, v.global, worst, c.tol)
			}
		}
	}
}
