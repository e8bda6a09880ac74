package scripts

import (
	"math"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/half"
)

// TestRMSInProgram: nn.star's nn_rms, the norm the whole-model token step computes in fp16
// (lm_decode.star's dec_model), against x / sqrt(mean x^2 + eps) in float64 of the fp16 input (eps 1e-5
// as the program holds it), at
// every column scale from 1e-3 to an rms of 400 (where a sum of plain squares overflows fp16).
func TestRMSInProgram(t *testing.T) {
	for _, mode := range []emulator.Numerics{emulator.FP16, emulator.FP32} {
		res, _ := runScript(t, "testdata/rms_norm.star", nil, emulator.Options{Numerics: mode}, false)
		x, y := tensorData(t, res.Globals["seen"]), tensorData(t, res.Globals["y"])
		const d, w = 64, 32
		if len(x) != d*w || len(y) != d*w {
			t.Fatalf("%v: x %d and y %d values, want %d", mode, len(x), len(y), d*w)
		}
		// x as the fp16 surface holds it; in fp16 about 6 roundings of
		// 2^-11 each (scale, square, sum, eps, pow, product)
		bound := 4e-3
		if mode == emulator.FP32 {
			bound = 1e-5
		}
		// the program's constants are fp16: eps enters as the square of sqrt(1e-5) rounded to fp16
		e := float64(half.RoundF16(float32(math.Sqrt(1e-5))))
		eps := e * e
		worst := 0.0
		for j := range w {
			var ss float64
			for i := range d {
				v := float64(x[i*w+j])
				ss += v * v
			}
			r := 1 / math.Sqrt(ss/d+eps)
			for i := range d {
				want := float64(x[i*w+j]) * r
				got := float64(y[i*w+j])
				if e := math.Abs(got-want) / math.Max(math.Abs(want), 1e-3); !(e <= bound) {
					t.Fatalf("%v: column %d, row %d: %v, want %v (relative error %.2g, bound %.0g)", mode, j, i, got, want, e, bound)
				} else {
					worst = math.Max(worst, e)
				}
			}
		}
		t.Logf("%v: largest relative error %.2g", mode, worst)
	}
}
