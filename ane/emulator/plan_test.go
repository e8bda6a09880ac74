package emulator

import (
	"testing"
	"unsafe"

	"github.com/anestar/anestar/mil"
)

// A chain of ops reuses the buffers of values already read, the answers stay right, and an output
// concat of channel blocks is written from its parts (the concat step is dropped) with the same bytes
// as a concat that also feeds another op (which runs).
func TestPlanReuseAndConcatOutput(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x) {
        tensor<fp16, [1, 2, 1, 3]> a = add(x=x, y=fp16(1.0))[name=string("a")];
        tensor<fp16, [1, 2, 1, 3]> b = mul(x=a, y=fp16(2.0))[name=string("b")];
        tensor<fp16, [1, 2, 1, 3]> c = add(x=b, y=fp16(0.5))[name=string("c")];
        tensor<fp16, [1, 2, 1, 3]> d = mul(x=c, y=c)[name=string("d")];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool il = const()[name=string("il"), val=bool(false)];
        tensor<fp16, [1, 4, 1, 3]> out = concat(axis=ax, interleave=il, values=(d, x))[name=string("out")];
    } -> (out);
}
`
	const used = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x) {
        tensor<fp16, [1, 2, 1, 3]> a = add(x=x, y=fp16(1.0))[name=string("a")];
        tensor<fp16, [1, 2, 1, 3]> b = mul(x=a, y=fp16(2.0))[name=string("b")];
        tensor<fp16, [1, 2, 1, 3]> c = add(x=b, y=fp16(0.5))[name=string("c")];
        tensor<fp16, [1, 2, 1, 3]> d = mul(x=c, y=c)[name=string("d")];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool il = const()[name=string("il"), val=bool(false)];
        tensor<fp16, [1, 4, 1, 3]> out = concat(axis=ax, interleave=il, values=(d, x))[name=string("out")];
        tensor<fp16, [1, 4, 1, 3]> out2 = add(x=out, y=fp16(0.0))[name=string("out2")];
    } -> (out, out2);
}
`
	in := []float32{0, 1, 2, 3, -1, 0.25}
	want := make([]float32, 12)
	for i, v := range in {
		c := (v+1)*2 + 0.5
		want[i] = c * c
		want[6+i] = v
	}
	for _, mode := range []Numerics{FP16, FP32} {
		k := compileText(t, Options{Numerics: mode}, src)
		for _, s := range k.steps {
			if s.op.Kind == "concat" {
				t.Errorf("mode %v: the output concat still runs", mode)
			}
		}
		byName := map[string]*tensor{}
		for _, s := range k.steps {
			for _, o := range s.outs {
				byName[o.name] = o
			}
		}
		if unsafe.SliceData(byName["a"].data) != unsafe.SliceData(byName["c"].data) {
			t.Errorf("mode %v: c does not reuse a's buffer (a is read only by b)", mode)
		}
		got := run(t, k, in)[0]
		k2 := compileText(t, Options{Numerics: mode}, used)
		outs := run(t, k2, in)
		for i := range want {
			if got[i] != want[i] || outs[0][i] != want[i] || outs[1][i] != want[i] {
				t.Fatalf("mode %v: element %d: elided %v, kept %v and %v, want %v", mode, i, got[i], outs[0][i], outs[1][i], want[i])
			}
		}
	}
}

// TestCastConcatOutput: an fp32 output cast from a concat read by the cast alone is written from the
// concat's parts (neither op runs), and the parts keep their buffers while later ops of the same size
// run, in both numeric modes.
func TestCastConcatOutput(t *testing.T) {
	const src = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x) {
        tensor<fp16, [1, 2, 1, 3]> c = add(x=x, y=fp16(0.5))[name=string("c")];
        tensor<fp16, [1, 2, 1, 3]> d = mul(x=c, y=c)[name=string("d")];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool il = const()[name=string("il"), val=bool(false)];
        tensor<fp16, [1, 4, 1, 3]> out = concat(axis=ax, interleave=il, values=(d, x))[name=string("out")];
        tensor<fp16, [1, 2, 1, 3]> e = add(x=x, y=fp16(2.0))[name=string("e")];
        tensor<fp16, [1, 2, 1, 3]> f = mul(x=e, y=e)[name=string("f")];
        string f32 = const()[name=string("f32"), val=string("fp32")];
        tensor<fp32, [1, 4, 1, 3]> out32 = cast(x=out, dtype=f32)[name=string("out32")];
    } -> (out32, f);
}
`
	in := []float32{0, 1, 2, 3, -1, 0.25}
	for _, mode := range []Numerics{FP16, FP32} {
		k := compileText(t, Options{Numerics: mode}, src)
		for _, s := range k.steps {
			if s.op.Kind == "concat" || s.op.Kind == "cast" {
				t.Errorf("mode %v: the output's %s still runs", mode, s.op.Kind)
			}
		}
		if got := k.Outputs()[0].Type().DType; got != mil.FP32 {
			t.Errorf("mode %v: output surface %v, want fp32", mode, got)
		}
		outs := run(t, k, in)
		for i, v := range in {
			c := v + 0.5
			e := v + 2
			if outs[0][i] != c*c || outs[0][6+i] != v || outs[1][i] != e*e {
				t.Fatalf("mode %v: element %d: out32 %v, %v; f %v; want %v, %v, %v", mode, i, outs[0][i], outs[0][6+i], outs[1][i], c*c, v, e*e)
			}
		}
	}
}
