package mil_test

import (
	"fmt"
	"testing"

	"github.com/anestar/anestar/internal/refkernels"
	"github.com/anestar/anestar/mil"
)

// refKernels generates every kernel of the reference sources at size c, with weights that are simple
// functions of their index (the text does not depend on them: they live in BLOBFILEs).
func refKernels(t *testing.T, c refkernels.Config) map[string]*refkernels.Kernel {
	w := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%7-3) / 64
		}
		return v
	}
	d, h := c.Dim, c.Hidden
	attn := refkernels.AttnWeights{RMS: w(d), Wq: w(d * d), Wk: w(d * d), Wv: w(d * d), Wo: w(d * d)}
	ffn := refkernels.FFNWeights{RMS: w(d), W1: w(h * d), W3: w(h * d), W2: w(d * h)}
	gens := map[string]func() (*refkernels.Kernel, error){
		"sdpa_fwd_taps":        func() (*refkernels.Kernel, error) { return refkernels.SDPAFwdTaps(c, attn) },
		"ffn_fwd_taps":         func() (*refkernels.Kernel, error) { return refkernels.FFNFwdTaps(c, ffn) },
		"ffn_bwd":              func() (*refkernels.Kernel, error) { return refkernels.FFNBwd(c, ffn.W1, ffn.W2, ffn.W3) },
		"qkvb":                 func() (*refkernels.Kernel, error) { return refkernels.QKVBwd(c, attn.Wq, attn.Wk, attn.Wv) },
		"sdpa_bwd1":            func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, attn.Wo) },
		"sdpa_bwd2":            func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
		"dyn_matmul":           func() (*refkernels.Kernel, error) { return refkernels.DynMatmul(c.Dim, c.Hidden, c.Seq) },
		"sdpa_fwd_dynamic":     func() (*refkernels.Kernel, error) { return refkernels.SDPAFwdDynamic(c) },
		"ffn_w13_dynamic":      func() (*refkernels.Kernel, error) { return refkernels.FFNW13Dynamic(c) },
		"ffn_w2_dynamic":       func() (*refkernels.Kernel, error) { return refkernels.FFNW2Dynamic(c) },
		"ffn_bwd_w2t_dynamic":  func() (*refkernels.Kernel, error) { return refkernels.FFNBwdW2tDynamic(c) },
		"ffn_bwd_w13t_dynamic": func() (*refkernels.Kernel, error) { return refkernels.FFNBwdW13tDynamic(c) },
		"wot_dynamic":          func() (*refkernels.Kernel, error) { return refkernels.WotDynamic(c) },
		"sdpa_bwd1_noweight":   func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1NoWeight(c) },
		"qkvb_dynamic":         func() (*refkernels.Kernel, error) { return refkernels.QKVBwdDynamic(c) },
	}
	out := map[string]*refkernels.Kernel{}
	for name, gen := range gens {
		k, err := gen()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = k
	}
	return out
}

// TestRefKernelsRoundTrip prints every reference kernel, parses the text, and checks that the result is
// Equal to the built program, prints identically and passes Check.
func TestRefKernelsRoundTrip(t *testing.T) {
	for _, c := range []refkernels.Config{{Dim: 64, Hidden: 128, Heads: 4, Seq: 32}, refkernels.Reference()} {
		for name, k := range refKernels(t, c) {
			t.Run(fmt.Sprintf("%s/dim%d", name, c.Dim), func(t *testing.T) {
				text := mil.Print(k.Program)
				p, err := mil.Parse(name+".mil", []byte(text))
				if err != nil {
					t.Fatalf("printed kernel does not parse: %v", err)
				}
				if !mil.Equal(p, k.Program) {
					t.Fatalf("parsed kernel differs from the built one:\n%s", text)
				}
				if again := mil.Print(p); again != text {
					t.Fatalf("printing the parsed kernel gives different text")
				}
				if err := mil.Check(p); err != nil {
					t.Fatalf("Check: %v", err)
				}
			})
		}
	}
}

// sdpaText returns the MIL text of the reference-size attention forward kernel, and its program.
func sdpaText(b *testing.B) (string, *mil.Program) {
	d := refkernels.Reference().Dim
	w := make([]float32, d*d)
	k, err := refkernels.SDPAFwdTaps(refkernels.Reference(), refkernels.AttnWeights{RMS: w[:d], Wq: w, Wk: w, Wv: w, Wo: w})
	if err != nil {
		b.Fatal(err)
	}
	return mil.Print(k.Program), k.Program
}

func BenchmarkParse(b *testing.B) {
	text, _ := sdpaText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := mil.Parse("sdpa_fwd_taps.mil", []byte(text)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPrint(b *testing.B) {
	text, p := sdpaText(b)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		mil.Print(p)
	}
}
