package scripts

import (
	"context"
	"math"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/internal/refkernels"
)

// TestLayerMatchesReference runs train_layer.star's layer forward (testdata/layer_ref.star: nn.star's
// pieces through the language model's kernels, the weights baked in) and the reference's two forward
// kernels (internal/refkernels, which follow the reference's generators op for op: sdpa_fwd_taps, then
// ffn_fwd_taps on x + o, each with its RMSNorm inside) on the same input and weights, RMSNorm gains
// other than one, in fp32 numerics: the layer's outputs x + o + ffn agree within 1e-3 of the largest,
// the difference the reference's fp16 gains make (ours are fp32 on the host).
func TestLayerMatchesReference(t *testing.T) {
	fp32 := emulator.Options{Numerics: emulator.FP32}
	res, _ := runScript(t, "testdata/layer_ref.star", with(), fp32, false)
	c := refkernels.Config{Dim: 32, Hidden: 64, Heads: 4, Seq: 32}
	W := tensorDict(t, res, "W")
	w := func(name string) []float32 { return W[name].Data() }
	x := tensorData(t, res.Globals["x"])
	got := tensorData(t, res.Globals["out"])

	be := emulator.New(fp32)
	run := func(k *refkernels.Kernel, in []float32, channels int) []float32 {
		t.Helper()
		ck, err := be.Compile(k.Program, k.Weights)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		defer ck.Close()
		if err := ck.Inputs()[0].WriteChannels(0, c.Dim, in); err != nil {
			t.Fatal(err)
		}
		if err := ck.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, channels*c.Seq)
		if err := ck.Outputs()[0].ReadChannels(0, channels, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ka, err := refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: w("rms1"), Wq: w("wq"), Wk: w("wk"), Wv: w("wv"), Wo: w("wo")})
	if err != nil {
		t.Fatal(err)
	}
	kf, err := refkernels.FFNFwdTaps(c, refkernels.FFNWeights{RMS: w("rms2"), W1: w("w1"), W3: w("w3"), W2: w("w2")})
	if err != nil {
		t.Fatal(err)
	}
	o := run(ka, x, c.Dim)
	x2 := make([]float32, len(x))
	for i := range x {
		x2[i] = x[i] + o[i]
	}
	y := run(kf, x2, c.Dim)
	var worst, scale, moved float64
	for i := range x2 {
		want := float64(x2[i] + y[i])
		worst = max(worst, math.Abs(float64(got[i])-want))
		scale = max(scale, math.Abs(want))
		moved = max(moved, math.Abs(want-float64(x[i])))
	}
	t.Logf("largest difference %.3g of %.3g (the layer moves x by up to %.3g)", worst, scale, moved)
	if worst > 1e-3*scale || moved < 0.1*scale {
		t.Errorf("the layer's output differs from the reference's by %.3g (largest %.3g; the layer moves x by %.3g)", worst, scale, moved)
	}
}
