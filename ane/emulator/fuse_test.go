package emulator

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/internal/numtest"
	"github.com/anestar/anestar/internal/refkernels"
	"github.com/anestar/anestar/mil"
)

// compileBoth compiles a reference kernel with op fusion and without.
func compileBoth(t *testing.T, rk *refkernels.Kernel, opts Options) (fused, plain *Kernel) {
	t.Helper()
	if err := mil.Check(rk.Program); err != nil {
		t.Fatal(err)
	}
	fn := rk.Program.Funcs[0]
	fused, err := compileWith(fn, rk.Weights, opts, true)
	if err != nil {
		t.Fatal(err)
	}
	plain, err = compileWith(fn, rk.Weights, opts, false)
	if err != nil {
		t.Fatal(err)
	}
	return fused, plain
}

// evalOne writes x to the kernel's single input and returns its single output.
func evalOne(t *testing.T, k ane.Binding, x []float32) []float32 {
	t.Helper()
	in, out := k.Inputs()[0], k.Outputs()[0]
	if err := in.WriteChannels(0, in.Channels(), x); err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := make([]float32, out.Channels()*out.Spatial())
	if err := out.ReadChannels(0, out.Channels(), o); err != nil {
		t.Fatal(err)
	}
	return o
}

// fixedOrderGemm runs the test's products on the fixed-order gemm (numtest.FixedOrderGemm).
func fixedOrderGemm(t *testing.T) {
	t.Helper()
	numtest.FixedOrderGemm(t)
}

// sameBits fails unless got and want hold the same bits (any NaN matches any NaN).
func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	bad, first := diffBits(got, want)
	for _, e := range first {
		t.Errorf("%s: %s", what, e)
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements differ", what, bad, len(want))
	}
}

// diffBits counts the elements where got and want differ in their bits (any NaN matches any NaN) and
// describes the first five.
func diffBits(got, want []float32) (bad int, first []string) {
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			if bad < 5 {
				first = append(first, fmt.Sprintf("element %d: fused %v (%#08x), separate ops %v (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w)))
			}
			bad++
		}
	}
	return bad, first
}

// randInput fills a kernel input with uniform values in [-r, r].
func randInput(rng *rand.Rand, n int, r float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32((rng.Float64()*2 - 1) * r)
	}
	return x
}

var fuseConfigs = []refkernels.Config{
	{Dim: 32, Hidden: 16, Heads: 4, Seq: 24},
	{Dim: 24, Hidden: 8, Heads: 3, Seq: 17},
	{Dim: 16, Hidden: 8, Heads: 1, Seq: 9}, // one head: the product split by the BLAS, rows in parallel
}

var numerics = []struct {
	name string
	n    Numerics
}{{"fp16", FP16}, {"fp32", FP32}}

// The fused causal attention and softmax gradient give the separate ops' bits on the attention kernels of
// the reference layer, at several sizes, in both numeric modes, and the chains are found.
func TestFusedKernelsExact(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range fuseConfigs {
		d := c.Dim
		w := func(n int) []float32 { return randInput(rng, n, 0.3) }
		gain := make([]float32, d)
		for i := range gain {
			gain[i] = 1
		}
		gens := []func() (*refkernels.Kernel, error){
			func() (*refkernels.Kernel, error) {
				return refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: gain, Wq: w(d * d), Wk: w(d * d), Wv: w(d * d), Wo: w(d * d)})
			},
			func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, w(d*d)) },
			func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
			func() (*refkernels.Kernel, error) { return refkernels.SDPAFwdDynamic(c) },
		}
		for _, gen := range gens {
			rk, err := gen()
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range numerics {
				name := fmt.Sprintf("%s/%+v/%s", rk.Name, c, mode.name)
				fused, plain := compileBoth(t, rk, Options{Numerics: mode.n})
				if len(fused.steps) >= len(plain.steps) {
					t.Errorf("%s: %d steps fused, %d separate: no chain was fused", name, len(fused.steps), len(plain.steps))
				}
				in := fused.Inputs()[0]
				for _, r := range []float64{0.5, 3, 30} {
					x := randInput(rng, in.Channels()*in.Spatial(), r)
					sameBits(t, fmt.Sprintf("%s/range %g", name, r), evalOne(t, fused, x), evalOne(t, plain, x))
				}
			}
		}
	}
}

// Rows whose masked scores the bound cannot place far below the row max are computed in full: huge
// scores above the diagonal (which give masked entries a nonzero probability in FP32 mode, and inf in
// FP16 mode), inf and NaN inputs.
func TestFusedAttentionFallbackRows(t *testing.T) {
	fixedOrderGemm(t)
	c := refkernels.Config{Dim: 32, Hidden: 16, Heads: 4, Seq: 24}
	d, s, hd := c.Dim, c.Seq, c.HeadDim()
	rk, err := refkernels.SDPABwd1(c, randInput(rand.New(rand.NewPCG(7, 8)), d*d, 0.3))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range numerics {
		fused, plain := compileBoth(t, rk, Options{Numerics: mode.n})
		rng := rand.New(rand.NewPCG(9, 10))
		x := randInput(rng, 4*d*s, 0.5)
		q := func(ch, pos int) *float32 { return &x[ch*s+pos] }
		k := func(ch, pos int) *float32 { return &x[(d+ch)*s+pos] }
		// Head 0: query 2 and key s-1 (above the diagonal for every query but the last) are huge.
		for e := range hd {
			*q(e, 2) = 200
			*k(e, s-1) = 200
		}
		// Head 1: an inf key at position 5, a NaN query at position 9.
		*k(hd, 5) = float32(math.Inf(1))
		*q(hd+1, 9) = float32(math.NaN())
		// Head 2: scores of several thousand, still finite in fp16.
		for e := range hd {
			*q(2*hd+e, 7) = 40
			*k(2*hd+e, 12) = -40
			*k(2*hd+e, 20) = 40
		}
		want := evalOne(t, plain, x)
		sameBits(t, mode.name, evalOne(t, fused, x), want)
		// The case the fallback exists for: a masked entry whose probability is not 0.
		p := want[(d+2)*s+s-1] // probs of head 0, query 2, key s-1
		if mode.n == FP32 && !(p > 0) {
			t.Errorf("fp32: masked probability %v, want > 0 (the test input no longer exercises the fallback)", p)
		}
		if mode.n == FP16 && p == p {
			t.Errorf("fp16: masked probability %v, want NaN (the score overflows)", p)
		}
	}
}

// Fused steps allocate nothing either.
func TestFusedEvalAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	prev := cpu.BLASName()
	if err := cpu.SetBLAS("gonum"); err != nil {
		t.Fatal(err)
	}
	defer cpu.SetBLAS(prev)
	c := refkernels.Config{Dim: 32, Hidden: 16, Heads: 4, Seq: 24}
	for _, gen := range []func() (*refkernels.Kernel, error){
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1NoWeight(c) },
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
	} {
		rk, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		k, _ := compileBoth(t, rk, Options{})
		in := k.Inputs()[0]
		evalOne(t, k, randInput(rand.New(rand.NewPCG(1, 1)), in.Channels()*in.Spatial(), 1))
		ctx := context.Background()
		if n := testing.AllocsPerRun(10, func() {
			if err := k.Eval(ctx); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Errorf("%s: Eval allocates %v times per run, want 0", rk.Name, n)
		}
	}
}

// The softmax gradient mil.Grad derives (two centering passes) fuses into one step, with the separate
// ops' bits in both numeric modes.
func TestFusedDerivedSoftmaxGrad(t *testing.T) {
	// Rows in whole groups and not, rows of one block of columns and of several.
	for _, sz := range []struct{ rows, n int }{{48, 40}, {45, 300}} {
		rows, n := sz.rows, sz.n
		gr := derivedSoftmaxGrad(t, 2, rows, n)
		fn := gr.Backward.Funcs[0]
		rng := rand.New(rand.NewPCG(11, 12))
		for _, mode := range numerics {
			name := fmt.Sprintf("%dx%d/%s", rows, n, mode.name)
			fused, err := compileWith(fn, gr.BackwardWeights, Options{Numerics: mode.n, Relaxed: true}, true)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := compileWith(fn, gr.BackwardWeights, Options{Numerics: mode.n, Relaxed: true}, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(plain.steps) - len(fused.steps); got != 7 {
				t.Errorf("%s: %d steps fused, %d separate: want the chain's 8 ops in one step", name, len(fused.steps), len(plain.steps))
			}
			for _, r := range []float64{0.5, 30} {
				in := map[string][]float32{"y": softmaxRows(randInput(rng, 2*rows*n, 3), n), "d_y": randInput(rng, 2*rows*n, r)}
				for i := range in["d_y"] {
					in["d_y"][i] += float32(r) // a common part, which the passes take away
				}
				sameBits(t, fmt.Sprintf("%s/range %g", name, r), evalNamed(t, fused, in, "d_x"), evalNamed(t, plain, in, "d_x"))
			}
		}
	}
}

// derivedSoftmaxGrad is mil.Grad's backward of softmax(x * 0.125) over the last axis of an fp16 x
// [1, planes, rows, n], taking the saved probabilities y and d_y, giving d_x.
func derivedSoftmaxGrad(t testing.TB, planes, rows, n int) *mil.Gradient {
	t.Helper()
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, planes, rows, n))
	b.Output(b.Softmax("y", b.Mul("xs", x, 0.125), -1))
	p, w, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	gr, err := mil.Grad(p, w, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	return gr
}

// softmaxRows is the softmax of each row of n values of x, in float64.
func softmaxRows(x []float32, n int) []float32 {
	out := make([]float32, len(x))
	for r := 0; r < len(x); r += n {
		var z float64
		for _, v := range x[r : r+n] {
			z += math.Exp(float64(v))
		}
		for j, v := range x[r : r+n] {
			out[r+j] = float32(math.Exp(float64(v)) / z)
		}
	}
	return out
}

// evalNamed writes the named inputs (zeros for any other) and returns output out.
func evalNamed(t *testing.T, k *Kernel, in map[string][]float32, out string) []float32 {
	t.Helper()
	for _, s := range k.Inputs() {
		v, ok := in[s.Name()]
		if !ok {
			v = make([]float32, s.Channels()*s.Spatial())
		}
		if err := s.WriteChannels(0, s.Channels(), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, s := range k.Outputs() {
		if s.Name() == out {
			v := make([]float32, s.Channels()*s.Spatial())
			if err := s.ReadChannels(0, s.Channels(), v); err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no output %s", out)
	return nil
}
