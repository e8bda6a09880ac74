package scripts

import (
	"context"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/internal/refkernels"
	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
)

// TestKernelsMatchReference builds the six kernels of lib/layer_kernels.star (testdata/kernels.star)
// and the Go generators of internal/refkernels, which follow the reference's generators op for op,
// with the same weights (RMSNorm gains other than one), and requires
//   - the same ops: kinds, result types and order (names may differ: the Starlark builder names an
//     op after its result, where the reference sometimes names them apart), and
//   - bit-identical outputs on the fp16 emulator for the same random input, which also checks the
//     values of every const and weight, the transposed ones included.
func TestKernelsMatchReference(t *testing.T) {
	res, _ := runScript(t, "testdata/kernels.star", with(), emulator.Options{}, false)
	c := refkernels.Config{Dim: 32, Hidden: 64, Heads: 4, Seq: 32}
	W := tensorDict(t, res, "W")
	w := func(name string) []float32 { return W[name].Data() }
	texts, ok := res.Globals["texts"].(*starlark.Dict)
	if !ok {
		t.Fatal("kernels.star left no dict texts")
	}
	ins, outs := tensorDict(t, res, "ins"), tensorDict(t, res, "outs")

	build := map[string]func() (*refkernels.Kernel, error){
		"sdpa_fwd_taps": func() (*refkernels.Kernel, error) {
			return refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: w("rms1"), Wq: w("wq"), Wk: w("wk"), Wv: w("wv"), Wo: w("wo")})
		},
		"ffn_fwd_taps": func() (*refkernels.Kernel, error) {
			return refkernels.FFNFwdTaps(c, refkernels.FFNWeights{RMS: w("rms2"), W1: w("w1"), W3: w("w3"), W2: w("w2")})
		},
		"ffn_bwd":   func() (*refkernels.Kernel, error) { return refkernels.FFNBwd(c, w("w1"), w("w2"), w("w3")) },
		"sdpa_bwd1": func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, w("wo")) },
		"sdpa_bwd2": func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
		"qkv_bwd":   func() (*refkernels.Kernel, error) { return refkernels.QKVBwd(c, w("wq"), w("wk"), w("wv")) },
	}
	if texts.Len() != len(build) {
		t.Fatalf("kernels.star built %d kernels, want %d", texts.Len(), len(build))
	}
	be := emulator.New(emulator.Options{})
	for _, name := range sortedKeys(build) {
		ref, err := build[name]()
		if err != nil {
			t.Fatalf("%s: refkernels: %v", name, err)
		}
		v, found, _ := texts.Get(starlark.String(name))
		if !found {
			t.Errorf("%s: not built by kernels.star", name)
			continue
		}
		text, _ := starlark.AsString(v)
		prog, err := mil.Parse(name+".mil", []byte(text))
		if err != nil {
			t.Fatalf("%s: parsing the script's MIL: %v", name, err)
		}
		compareOps(t, name, prog.Funcs[0], ref.Program.Funcs[0])

		k, err := be.Compile(ref.Program, ref.Weights)
		if err != nil {
			t.Fatalf("%s: compiling refkernels: %v", name, err)
		}
		in, out := k.Inputs()[0], k.Outputs()[0]
		if err := in.WriteChannels(0, in.Channels(), ins[name].Data()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := k.Eval(context.Background()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := outs[name].Data()
		want := make([]float32, out.Channels()*out.Spatial())
		if err := out.ReadChannels(0, out.Channels(), want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d outputs, refkernels %d", name, len(got), len(want))
		}
		bad := 0
		for i := range want {
			if got[i] != want[i] {
				if bad++; bad <= 3 {
					t.Errorf("%s: output %d (channel %d) = %g, refkernels %g", name, i, i/out.Spatial(), got[i], want[i])
				}
			}
		}
		k.Close()
	}
}

// compareOps requires the same op kinds with the same result types, in order.
func compareOps(t *testing.T, name string, got, want *mil.Func) {
	t.Helper()
	if len(got.Inputs) != 1 || !got.Inputs[0].Type.Equal(want.Inputs[0].Type) {
		t.Errorf("%s: input %v, refkernels %v", name, got.Inputs[0].Type, want.Inputs[0].Type)
	}
	if len(got.Ops) != len(want.Ops) {
		t.Errorf("%s: %d ops, refkernels %d", name, len(got.Ops), len(want.Ops))
	}
	for i := range min(len(got.Ops), len(want.Ops)) {
		g, w := got.Ops[i], want.Ops[i]
		if g.Kind != w.Kind || len(g.Results) != len(w.Results) || !g.Results[0].Type.Equal(w.Results[0].Type) {
			t.Errorf("%s: op %d is %s %s %s, refkernels %s %s %s", name, i,
				g.Results[0].Type, g.Results[0].Name, g.Kind, w.Results[0].Type, w.Results[0].Name, w.Kind)
			return
		}
	}
}
