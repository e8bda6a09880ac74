package emulator

import (
	"context"
	"math"
	"testing"

	"github.com/anestar/anestar/half"
)

// The fp32 I/O of a kernel computing in fp16: the cast in, the input's only reader, shares the input's
// buffer and the input's transfer rounds the values; the cast out changes no value and shares its
// input's buffer (no step runs either).
func TestCastRoundsOnceAndWidensInPlace(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 2, 1, 32]> x) {
        string dh = const()[name=string("dh"), val=string("fp16")];
        tensor<fp16, [1, 2, 1, 32]> h = cast(x=x, dtype=dh)[name=string("h")];
        tensor<fp16, [1, 2, 1, 32]> y = mul(x=h, y=h)[name=string("y")];
        string df = const()[name=string("df"), val=string("fp32")];
        tensor<fp32, [1, 2, 1, 32]> out = cast(x=y, dtype=df)[name=string("out")];
    } -> (out);
}
`
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)*0.7)) * float32(1+i) // values fp16 does not hold
	}
	for _, mode := range []Numerics{FP16, FP32} {
		k := compileText(t, Options{Numerics: mode}, src)
		var h, y, out *tensor
		for _, s := range k.steps {
			for _, o := range s.outs {
				switch o.name {
				case "h":
					h = o
					if s.run != nil {
						t.Errorf("mode %v: the cast of the input should share its buffer", mode)
					}
					if r := k.inX[0].round; r != (mode == FP16) {
						t.Errorf("mode %v: the input's transfer rounds: %v", mode, r)
					}
				case "y":
					y = o
				case "out":
					out = o
					if s.run != nil {
						t.Errorf("mode %v: cast fp16 to fp32 should share its input's buffer", mode)
					}
				}
			}
		}
		if h == nil || y == nil || out == nil {
			t.Fatalf("mode %v: steps for h, y, out not all found", mode)
		}
		if &out.data[0] != &y.data[0] {
			t.Errorf("mode %v: out does not share y's buffer", mode)
		}
		got := run(t, k, in)[0]
		for i, v := range in {
			want := v * v
			if mode == FP16 {
				r := half.RoundF16(v)
				want = half.RoundF16(r * r)
			}
			if got[i] != want {
				t.Fatalf("mode %v: out[%d] = %v, want %v", mode, i, got[i], want)
			}
		}
		k.Close()
	}
}

// A cast to fp16 of a value with other readers rounds as it copies: one step, no separate rounding pass.
func TestCastRoundsAsItCopies(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 2, 1, 32]> x) {
        string dh = const()[name=string("dh"), val=string("fp16")];
        tensor<fp16, [1, 2, 1, 32]> h = cast(x=x, dtype=dh)[name=string("h")];
        tensor<fp32, [1, 2, 1, 32]> x2 = add(x=x, y=x)[name=string("x2")];
        string df = const()[name=string("df"), val=string("fp32")];
        tensor<fp32, [1, 2, 1, 32]> hf = cast(x=h, dtype=df)[name=string("hf")];
        tensor<fp32, [1, 2, 1, 32]> out = add(x=hf, y=x2)[name=string("out")];
    } -> (out);
}
`
	in := make([]float32, 64)
	for i := range in {
		in[i] = float32(math.Sin(float64(i)*0.7)) * float32(1+i)
	}
	k := compileText(t, Options{Numerics: FP16}, src)
	defer k.Close()
	if k.inX[0].round {
		t.Errorf("an input with two readers is rounded on the way in")
	}
	for _, s := range k.steps {
		if s.result == "h" && (s.run == nil || len(s.round) != 0) {
			t.Errorf("cast to fp16 should run once and round as it copies (run %v, %d rounding passes)", s.run != nil, len(s.round))
		}
	}
	got := run(t, k, in)[0]
	for i, v := range in {
		if want := half.RoundF16(v) + (v + v); got[i] != want {
			t.Fatalf("out[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestFP16PortsUnroundedInFP32 runs a program with fp16 I/O: in FP32 numerics its ports are fp32
// surfaces and carry the values written unrounded (nothing rounds in those numerics); in FP16 the
// surfaces are fp16 and the values arrive rounded.
func TestFP16PortsUnroundedInFP32(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> y = mul(x=x, y=x)[name=string("y")];
    } -> (y);
}
`
	in := make([]float32, 64)
	for i := range in {
		in[i] = 1 + float32(i)/1000 // values fp16 does not hold
	}
	for _, mode := range []Numerics{FP16, FP32} {
		k := compileText(t, Options{Numerics: mode}, src)
		if dt := k.Inputs()[0].Type().DType.String(); (dt == "fp32") != (mode == FP32) {
			t.Errorf("mode %v: the input surface is %s", mode, dt)
		}
		if err := k.Inputs()[0].WriteChannels(0, 2, in); err != nil {
			t.Fatal(err)
		}
		if err := k.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, 64)
		if err := k.Outputs()[0].ReadChannels(0, 2, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range in {
			want := v * v
			if mode == FP16 {
				r := half.RoundF16(v)
				want = half.RoundF16(r * r)
			}
			if out[i] != want {
				t.Fatalf("mode %v: element %d = %v, want %v", mode, i, out[i], want)
			}
		}
	}
}
