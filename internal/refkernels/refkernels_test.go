package refkernels

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

func randWeights(r *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	for i := range w {
		w[i] = float32(r.NormFloat64() * 0.02)
	}
	return w
}

// allKernels generates every kernel for c, keyed by the reference generator's name.
func allKernels(c Config) (map[string]*Kernel, error) {
	r := rand.New(rand.NewPCG(1, uint64(c.Dim)))
	d, h := c.Dim, c.Hidden
	attn := AttnWeights{RMS: randWeights(r, d), Wq: randWeights(r, d*d), Wk: randWeights(r, d*d), Wv: randWeights(r, d*d), Wo: randWeights(r, d*d)}
	ffn := FFNWeights{RMS: randWeights(r, d), W1: randWeights(r, h*d), W3: randWeights(r, h*d), W2: randWeights(r, d*h)}
	gens := map[string]func() (*Kernel, error){
		"train_large:gen_sdpa_fwd_taps":        func() (*Kernel, error) { return SDPAFwdTaps(c, attn) },
		"train_large:gen_ffn_fwd_taps":         func() (*Kernel, error) { return FFNFwdTaps(c, ffn) },
		"train_large:gen_ffn_bwd":              func() (*Kernel, error) { return FFNBwd(c, ffn.W1, ffn.W2, ffn.W3) },
		"train_large:gen_qkvb":                 func() (*Kernel, error) { return QKVBwd(c, attn.Wq, attn.Wk, attn.Wv) },
		"train_large:gen_sdpa_bwd1":            func() (*Kernel, error) { return SDPABwd1(c, attn.Wo) },
		"train_large:gen_sdpa_bwd2":            func() (*Kernel, error) { return SDPABwd2(c) },
		"mil_dynamic:gen_dyn_matmul_mil":       func() (*Kernel, error) { return DynMatmul(c.Dim, c.Hidden, c.Seq) },
		"mil_dynamic:gen_sdpa_fwd_dynamic":     func() (*Kernel, error) { return SDPAFwdDynamic(c) },
		"mil_dynamic:gen_ffn_w13_dynamic":      func() (*Kernel, error) { return FFNW13Dynamic(c) },
		"mil_dynamic:gen_ffn_w2_dynamic":       func() (*Kernel, error) { return FFNW2Dynamic(c) },
		"mil_dynamic:gen_ffn_bwd_w2t_dynamic":  func() (*Kernel, error) { return FFNBwdW2tDynamic(c) },
		"mil_dynamic:gen_ffn_bwd_w13t_dynamic": func() (*Kernel, error) { return FFNBwdW13tDynamic(c) },
		"mil_dynamic:gen_wot_dynamic":          func() (*Kernel, error) { return WotDynamic(c) },
		"mil_dynamic:gen_sdpa_bwd1_noweight":   func() (*Kernel, error) { return SDPABwd1NoWeight(c) },
		"mil_dynamic:gen_sdpa_bwd2":            func() (*Kernel, error) { return SDPABwd2(c) },
		"mil_dynamic:gen_qkvb_dynamic":         func() (*Kernel, error) { return QKVBwdDynamic(c) },
	}
	out := map[string]*Kernel{}
	for name, gen := range gens {
		k, err := gen()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = k
	}
	return out, nil
}

// checkKernel checks the program, its weights and the layouts of one kernel.
func checkKernel(t *testing.T, name string, k *Kernel) {
	t.Helper()
	if err := mil.Check(k.Program); err != nil {
		t.Errorf("%s: Check: %v", name, err)
	}
	if err := mil.CheckWeights(k.Program, k.Weights); err != nil {
		t.Errorf("%s: CheckWeights: %v", name, err)
	}
	for _, l := range []Layout{k.In, k.Out} {
		n := l.Channels
		if l.Axis == 3 {
			n = l.Spatial
		}
		off := 0
		for _, s := range l.Segments {
			if s.Offset != off || s.Size <= 0 {
				t.Errorf("%s: segment %+v does not follow offset %d", name, s, off)
			}
			off += s.Size
		}
		if off != n {
			t.Errorf("%s: segments cover %d of %d", name, off, n)
		}
	}
}

func TestKernelsSmall(t *testing.T) {
	ks, err := allKernels(Config{Dim: 64, Hidden: 128, Heads: 4, Seq: 32})
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range ks {
		checkKernel(t, name, k)
	}
}

func TestKernelsReference(t *testing.T) {
	if testing.Short() {
		t.Skip("reference sizes in -short mode")
	}
	ks, err := allKernels(Reference())
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range ks {
		checkKernel(t, name, k)
	}
	// Surface sizes the reference allocates.
	c := Reference()
	sizes := map[string][2]int{ // channels of in, out
		"train_large:gen_sdpa_fwd_taps": {768, 6 * 768},
		"train_large:gen_ffn_fwd_taps":  {768, 2*768 + 3*2048},
		"train_large:gen_ffn_bwd":       {768 + 2*2048, 768 + 2*2048},
		"train_large:gen_qkvb":          {3 * 768, 768},
		"train_large:gen_sdpa_bwd1":     {4 * 768, 768 + 2*12*512},
		"train_large:gen_sdpa_bwd2":     {2*12*512 + 2*768, 2 * 768},
	}
	for name, want := range sizes {
		k := ks[name]
		if k.In.Channels != want[0] || k.Out.Channels != want[1] || k.In.Spatial != c.Seq || k.Out.Spatial != c.Seq {
			t.Errorf("%s: surfaces [%d, %d] x [%d, %d], want channels %v, seq %d", name, k.In.Channels, k.Out.Channels, k.In.Spatial, k.Out.Spatial, want, c.Seq)
		}
	}
	if k := ks["mil_dynamic:gen_sdpa_fwd_dynamic"]; k.In.Spatial != 512+4*768 || k.In.DType != mil.FP32 {
		t.Errorf("sdpa_fwd_dynamic input %+v", k.In)
	}
}

// TestKernelsMatchReference compares each kernel's ops (result name, kind, op name, in order) with the ops
// the reference generators emit, extracted into testdata/reference_ops.txt by
// testdata/extract_reference_ops.py.
func TestKernelsMatchReference(t *testing.T) {
	f, err := os.Open("testdata/reference_ops.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 4 {
			t.Fatalf("bad line %q", sc.Text())
		}
		want[fields[0]] = append(want[fields[0]], strings.Join(fields[1:], " "))
	}
	ks, err := allKernels(Config{Dim: 64, Hidden: 128, Heads: 4, Seq: 32})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(ks) {
		t.Errorf("reference has %d generators, we have %d", len(want), len(ks))
	}
	for name, k := range ks {
		var got []string
		for _, op := range k.Program.Funcs[0].Ops {
			got = append(got, fmt.Sprintf("%s %s %s", op.Results[0].Name, op.Kind, op.Attr("name").Value.Strs[0]))
		}
		w := want[name]
		for i := 0; i < max(len(got), len(w)); i++ {
			var g, r string
			if i < len(got) {
				g = got[i]
			}
			if i < len(w) {
				r = w[i]
			}
			if g != r {
				t.Errorf("%s: op %d is %q, reference %q", name, i, g, r)
				break
			}
		}
	}
}

// TestTransposedWeights checks that the backward kernels store W^T: element (i, j) of Wot is Wo[j][i].
func TestTransposedWeights(t *testing.T) {
	c := Config{Dim: 8, Hidden: 16, Heads: 2, Seq: 4}
	wo := make([]float32, 64)
	for i := range wo {
		wo[i] = float32(i) // exact in fp16
	}
	k, err := SDPABwd1(c, wo)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.Program.Funcs[0].ConstValue("Wot").Float32s(k.Weights)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		for j := range 8 {
			if got[i*8+j] != wo[j*8+i] {
				t.Fatalf("Wot[%d][%d] = %v, want Wo[%d][%d] = %v", i, j, got[i*8+j], j, i, wo[j*8+i])
			}
		}
	}
	mask, err := k.Program.Funcs[0].ConstValue("cm").Float32s(k.Weights)
	if err != nil {
		t.Fatal(err)
	}
	if mask[0] != 0 || mask[1] != -65504 || mask[3*4+3] != 0 || mask[3*4+2] != 0 || mask[2*4+3] != -65504 {
		t.Errorf("mask %v", mask)
	}
}

func TestKernelErrors(t *testing.T) {
	c := Config{Dim: 64, Hidden: 128, Heads: 4, Seq: 32}
	if _, err := SDPABwd2(Config{Dim: 10, Hidden: 8, Heads: 3, Seq: 4}); err == nil || !strings.Contains(err.Error(), "does not divide") {
		t.Errorf("dim 10, 3 heads: %v", err)
	}
	if _, err := SDPABwd2(Config{}); err == nil {
		t.Error("zero config accepted")
	}
	_, err := QKVBwd(c, make([]float32, 10), make([]float32, 64*64), make([]float32, 64*64))
	if err == nil || !strings.Contains(err.Error(), `op "Wqt" (const)`) {
		t.Errorf("short Wq: %v", err)
	}
}
