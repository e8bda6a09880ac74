package emulator

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// An fp16 weight blob decodes to the values the generic path gives (decode, then round to fp16), and a
// blob that does not fit its value is an error naming the file.
func TestDecodeF16Blob(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	vals := make([]float32, 1000)
	for i := range vals {
		vals[i] = float32(rng.NormFloat64() * 100)
	}
	vals[0], vals[1], vals[2] = 1e-7, 70000, float32(math.Inf(-1))
	bw := mil.NewBlobWriter()
	off, err := bw.AddFloat32s(mil.FP16, vals)
	if err != nil {
		t.Fatal(err)
	}
	off32, err := bw.AddFloat32s(mil.FP32, vals[:10])
	if err != nil {
		t.Fatal(err)
	}
	const path = "@model_path/weights/w.bin"
	w := mil.Weights{path: bw.Bytes()}
	v := &mil.Value{Type: mil.Tensor(mil.FP16, 10, 100), Blob: &mil.BlobRef{Path: path, Offset: off}}
	got, err := constTensor("w", v, w)
	if err != nil {
		t.Fatal(err)
	}
	want, err := v.Float32s(w)
	if err != nil {
		t.Fatal(err)
	}
	roundSlice(want)
	for i := range want {
		if math.Float32bits(got.data[i]) != math.Float32bits(want[i]) {
			t.Fatalf("element %d: %v, want %v", i, got.data[i], want[i])
		}
	}
	for _, bad := range []*mil.Value{
		{Type: mil.Tensor(mil.FP16, 10, 100), Blob: &mil.BlobRef{Path: "@model_path/weights/none.bin", Offset: off}},
		{Type: mil.Tensor(mil.FP16, 10, 99), Blob: &mil.BlobRef{Path: path, Offset: off}},
		{Type: mil.Tensor(mil.FP16, 10), Blob: &mil.BlobRef{Path: path, Offset: off32}},
		{Type: mil.Tensor(mil.FP16, 10), Blob: &mil.BlobRef{Path: path, Offset: 7}},
	} {
		if _, err := constTensor("w", bad, w); err == nil || !strings.Contains(err.Error(), "weights/") {
			t.Errorf("%s at %d: error %v, want one naming the weight file", bad.Type, bad.Blob.Offset, err)
		}
	}
}

// Close drops the kernel's buffers; Eval and surface accesses fail with ErrClosed.
func TestCloseDropsBuffers(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 4, 1, 2]> x) {
        tensor<fp16, [1, 4, 1, 2]> out = exp(x=x)[name=string("out")];
    } -> (out);
}
`
	k := compileText(t, Options{}, src)
	got := run(t, k, []float32{0, 0, 0, 0, 0, 0, 0, 0})[0]
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if k.steps != nil || k.inT != nil || k.outT != nil || k.inX != nil || k.outX != nil || k.owned != nil || k.mems != nil {
		t.Error("Close kept buffers")
	}
	if err := k.Eval(context.Background()); !errors.Is(err, ane.ErrClosed) {
		t.Errorf("Eval after Close: %v, want the kernel-closed error", err)
	}
	if got[0] != 1 {
		t.Errorf("exp(0) = %v, want 1", got[0])
	}
	o := make([]float32, 8)
	if err := k.Outputs()[0].ReadChannels(0, 4, o); err == nil || !strings.Contains(err.Error(), ane.ErrClosed.Error()) {
		t.Errorf("output after Close: %v, want the kernel-closed error", err)
	}
	if err := k.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
