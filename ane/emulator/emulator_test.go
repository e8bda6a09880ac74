package emulator

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/mil"
)

// compileText compiles MIL text in relaxed mode: these tests are of the emulator's numerics, on
// programs the ANE need not accept (its rules are tested in eligible_test.go).
func compileText(t testing.TB, opts Options, src string) *Kernel {
	t.Helper()
	p, err := mil.Parse("t.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	opts.Relaxed = true
	k, err := New(opts).Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*Kernel)
}

// run writes in to the inputs of k (a kernel's own surfaces or another binding's), evaluates it and
// returns its outputs.
func run(t testing.TB, k ane.Binding, in ...[]float32) [][]float32 {
	t.Helper()
	for i, s := range k.Inputs() {
		if err := s.WriteChannels(0, s.Channels(), in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	var outs [][]float32
	for _, s := range k.Outputs() {
		o := make([]float32, s.Channels()*s.Spatial())
		if err := s.ReadChannels(0, s.Channels(), o); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	return outs
}

// Each fp16 op rounds its result: 2048 + 1 is 2048 in fp16 and 2049 without rounding; a result declared
// fp32 is not rounded in either mode.
func TestRoundingPerOp(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 1, 1, 2]> x) {
        string h = const()[name=string("h"), val=string("fp16")];
        tensor<fp16, [1, 1, 1, 2]> xh = cast(x=x, dtype=h)[name=string("xh")];
        tensor<fp16, [1, 1, 1, 2]> s = add(x=xh, y=fp16(1.0))[name=string("s")];
        string f = const()[name=string("f"), val=string("fp32")];
        tensor<fp32, [1, 1, 1, 2]> sf = cast(x=s, dtype=f)[name=string("sf")];
        tensor<fp32, [1, 1, 1, 2]> out = add(x=sf, y=fp32(0.0001))[name=string("out")];
    } -> (out);
}
`
	in := []float32{2048, 1}
	got16 := run(t, compileText(t, Options{Numerics: FP16}, src), in)[0]
	if got16[0] != 2048+float32(0.0001) || got16[1] != 2+float32(0.0001) {
		t.Errorf("FP16 mode: got %v, want [2048.0001 2.0001]", got16)
	}
	got32 := run(t, compileText(t, Options{Numerics: FP32}, src), in)[0]
	if got32[0] != 2049+float32(0.0001) {
		t.Errorf("FP32 mode: got %v, want 2049.0001", got32)
	}
}

// matmul multiplies fp16 values, accumulates in fp32 and rounds once: 1 + 16 * 2^-12 = 1 + 2^-8 is exact in
// fp16, while an fp16 running sum would stay at 1.
func TestMatmulRoundsOnce(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 17]> x, tensor<fp16, [17, 1]> y) {
        tensor<fp16, [1, 1]> out = matmul(x=x, y=y)[name=string("out")];
    } -> (out);
}
`
	x := make([]float32, 17)
	y := make([]float32, 17)
	x[0] = 1
	for i := range y {
		y[i] = 1
		if i > 0 {
			x[i] = 1.0 / 4096
		}
	}
	got := run(t, compileText(t, Options{}, src), x, y)[0][0]
	if got != 1+1.0/256 {
		t.Errorf("matmul = %v, want %v", got, 1+1.0/256)
	}
}

// Overflow gives inf (no saturation), and the numerics check names the first op whose result holds it.
func TestOverflowAndCheckNumerics(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 1, 1, 2]> x) {
        tensor<fp16, [1, 1, 1, 2]> sq = mul(x=x, y=x)[name=string("sq")];
        tensor<fp16, [1, 1, 1, 2]> big = mul(x=sq, y=x)[name=string("big")];
        tensor<fp16, [1, 1, 1, 2]> out = sub(x=big, y=big)[name=string("out")];
    } -> (out);
}
`
	k := compileText(t, Options{}, src)
	got := run(t, k, []float32{300, 2})[0]
	if !math.IsNaN(float64(got[0])) || got[1] != 0 {
		t.Errorf("inf - inf: got %v, want [NaN 0]", got)
	}
	kc := compileText(t, Options{CheckNumerics: true}, src)
	run(t, kc, []float32{1, 2})
	if err := kc.Inputs()[0].WriteChannels(0, 1, []float32{300, 2}); err != nil {
		t.Fatal(err)
	}
	err := kc.Eval(context.Background())
	if err == nil {
		t.Fatal("numerics check: no error")
	}
	for _, want := range []string{"eval 2", "MIL line 4", "mul", `"sq"`, "+Inf"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("numerics check error %q does not mention %q", err, want)
		}
	}
	// In FP32 mode 300^2 is finite, 300^3 = 2.7e7 too: no error.
	k32 := compileText(t, Options{Numerics: FP32, CheckNumerics: true}, src)
	if got := run(t, k32, []float32{300, 2})[0]; got[0] != 0 {
		t.Errorf("FP32 mode: got %v, want 0", got)
	}
}

// A steady-state Eval allocates nothing, and repeated evals are bit-identical. The test runs with gonum's
// sgemm, which allocates nothing at these sizes; a BLAS called through purego allocates per call on its
// own account.
func TestEvalAllocatesNothing(t *testing.T) {
	prev := cpu.BLASName()
	if err := cpu.SetBLAS("gonum"); err != nil {
		t.Fatal(err)
	}
	defer cpu.SetBLAS(prev)
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 16, 1, 8]> x) {
        tensor<fp16, [16, 16, 1, 1]> W = const()[name=string("W"), val=tensor<fp16, [16, 16, 1, 1]>(BLOBFILE(path=string("@model_path/weights/w.bin"), offset=uint64(64)))];
        tensor<fp16, [1, 16, 1, 8]> h = conv(x=x, weight=W)[name=string("h")];
        tensor<fp16, [1, 16, 1, 8]> g = silu(x=h)[name=string("g")];
        tensor<int32, [4]> sh = const()[name=string("sh"), val=tensor<int32, [4]>([1, 2, 8, 8])];
        tensor<fp16, [1, 2, 8, 8]> r = reshape(x=g, shape=sh)[name=string("r")];
        tensor<int32, [4]> pm = const()[name=string("pm"), val=tensor<int32, [4]>([0, 1, 3, 2])];
        tensor<fp16, [1, 2, 8, 8]> tr = transpose(x=r, perm=pm)[name=string("tr")];
        tensor<fp16, [1, 2, 8, 8]> mm = matmul(x=r, y=tr)[name=string("mm")];
        int32 ax = const()[name=string("ax"), val=int32(-1)];
        tensor<fp16, [1, 2, 8, 8]> sm = softmax(x=mm, axis=ax)[name=string("sm")];
        tensor<int32, [1]> rax = const()[name=string("rax"), val=tensor<int32, [1]>([1])];
        tensor<fp16, [1, 1, 8, 8]> out = reduce_sum(x=sm, axes=rax, keep_dims=bool(true))[name=string("out")];
    } -> (out);
}
`
	bw := mil.NewBlobWriter()
	w := make([]float32, 256)
	for i := range w {
		w[i] = float32(i%17-8) / 16
	}
	off, err := bw.AddFloat32s(mil.FP16, w)
	if err != nil || off != 64 {
		t.Fatalf("blob: offset %d, %v", off, err)
	}
	p, err := mil.Parse("t.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	kk, err := New(Options{Relaxed: true, CheckNumerics: true}).Compile(p, mil.Weights{"@model_path/weights/w.bin": bw.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	k := kk.(*Kernel)
	x := make([]float32, 128)
	for i := range x {
		x[i] = float32(i%11) / 8
	}
	first := run(t, k, x)[0]
	ctx := context.Background()
	n := testing.AllocsPerRun(20, func() {
		if err := k.Eval(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 && !raceEnabled { // under -race sync.Pool drops items, so only determinism is checked
		t.Errorf("Eval allocates %v times per run, want 0", n)
	}
	again := run(t, k, x)[0]
	for i := range first {
		if math.Float32bits(first[i]) != math.Float32bits(again[i]) {
			t.Fatalf("eval is not deterministic at %d: %v then %v", i, first[i], again[i])
		}
	}
	// Each softmax row sums to 1, so each output column sums over 2 heads to 2 per row of 8.
	var total float64
	for _, v := range first {
		total += float64(v)
	}
	if math.Abs(total-16) > 0.05 {
		t.Errorf("sum of outputs %v, want 16", total)
	}
	if k.FLOPs() <= 0 || k.Evals() != 23 {
		t.Errorf("FLOPs %v, Evals %d", k.FLOPs(), k.Evals())
	}
}

// Reshape, expand_dims, squeeze and contiguous slices share their input's buffer.
func TestAliasing(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 4, 1, 3]> x) {
        tensor<fp16, [1, 4, 1, 3]> y = add(x=x, y=fp16(1.0))[name=string("y")];
        tensor<int32, [2]> sh = const()[name=string("sh"), val=tensor<int32, [2]>([4, 3])];
        tensor<fp16, [4, 3]> r = reshape(x=y, shape=sh)[name=string("r")];
        tensor<int32, [4]> b = const()[name=string("b"), val=tensor<int32, [4]>([0, 1, 0, 0])];
        tensor<int32, [4]> s = const()[name=string("s"), val=tensor<int32, [4]>([1, 2, 1, 3])];
        tensor<fp16, [1, 2, 1, 3]> out = slice_by_size(x=y, begin=b, size=s)[name=string("out")];
    } -> (r, out);
}
`
	k := compileText(t, Options{}, src)
	var y *tensor
	for _, s := range k.steps {
		if s.result == "y" {
			y = s.outs[0]
		}
	}
	for _, s := range k.steps {
		if s.result == "r" || s.result == "out" {
			if s.run != nil || &s.outs[0].data[0] != &y.data[3*boolInt(s.result == "out")] {
				t.Errorf("%s does not alias y", s.result)
			}
		}
	}
	got := run(t, k, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	if got[1][0] != 5 || got[1][5] != 10 || got[0][11] != 13 {
		t.Errorf("aliased outputs: %v", got)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestRegistry(t *testing.T) {
	b, err := ane.Open("emulator", ane.Settings{FP32: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Name() != "emulator" || b.(*Backend).Options().Numerics != FP32 {
		t.Errorf("Open(emulator) gave %s with %+v", b.Name(), b.(*Backend).Options())
	}
	if p := b.PeakFLOPS(); !(p > 1e8) {
		t.Errorf("PeakFLOPS = %v, want a measured rate above 0.1 GFLOP/s", p)
	}
}

// TestIntDivByZero: an int32 real_div by 0 is an eval error naming the op, not inf or NaN in an int32
// tensor; other quotients truncate toward zero.
func TestIntDivByZero(t *testing.T) {
	src := `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 1, 1, 32]> x) {
        tensor<int32, [4]> a = const()[name = string("a"), val = tensor<int32, [4]>([7, -7, 8, 1])];
        tensor<int32, [4]> b = const()[name = string("b"), val = tensor<int32, [4]>([2, 2, 0, 1])];
        tensor<int32, [4]> q = real_div(x = a, y = b)[name = string("q")];
        tensor<fp16, [1, 1, 1, 32]> y = relu(x = x)[name = string("y")];
    } -> (y);
}
`
	p, err := mil.Parse("t.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	k, err := New(Options{Relaxed: true}).Compile(p, nil)
	if err != nil {
		// A backend may fold the constant division at compile time; then the error comes now.
		if !strings.Contains(err.Error(), "division by zero") {
			t.Fatal(err)
		}
		return
	}
	defer k.Close()
	err = k.Eval(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"q"`) || !strings.Contains(err.Error(), "int32 division by zero (element 2 of y)") {
		t.Fatalf("eval: %v", err)
	}
}
