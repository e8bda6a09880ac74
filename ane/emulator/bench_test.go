package emulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/internal/refkernels"
)

// Benchmarks of the reference kernels at the reference sizes (dim 768, hidden 2048, 12 heads, seq 512) in
// both numeric modes; they report ms per eval and GFLOP/s (multiply-adds count two).
//
//	go test -run - -bench . -benchtime 5x ./ane/emulator

func benchKernels(b *testing.B) map[string]func() (*refkernels.Kernel, error) {
	c := refkernels.Reference()
	rng := rand.New(rand.NewPCG(1, 2))
	w := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = float32(rng.Float64()*2-1) * 0.03
		}
		return out
	}
	d, h := c.Dim, c.Hidden
	gain := make([]float32, d)
	for i := range gain {
		gain[i] = 1
	}
	return map[string]func() (*refkernels.Kernel, error){
		"sdpa_fwd_taps": func() (*refkernels.Kernel, error) {
			return refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: gain, Wq: w(d * d), Wk: w(d * d), Wv: w(d * d), Wo: w(d * d)})
		},
		"ffn_fwd_taps": func() (*refkernels.Kernel, error) {
			return refkernels.FFNFwdTaps(c, refkernels.FFNWeights{RMS: gain, W1: w(h * d), W3: w(h * d), W2: w(d * h)})
		},
		"ffn_bwd":            func() (*refkernels.Kernel, error) { return refkernels.FFNBwd(c, w(h*d), w(d*h), w(h*d)) },
		"qkv_bwd":            func() (*refkernels.Kernel, error) { return refkernels.QKVBwd(c, w(d*d), w(d*d), w(d*d)) },
		"sdpa_bwd1":          func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, w(d*d)) },
		"sdpa_bwd2":          func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
		"sdpa_fwd_dynamic":   func() (*refkernels.Kernel, error) { return refkernels.SDPAFwdDynamic(c) },
		"ffn_w13_dynamic":    func() (*refkernels.Kernel, error) { return refkernels.FFNW13Dynamic(c) },
		"ffn_w2_dynamic":     func() (*refkernels.Kernel, error) { return refkernels.FFNW2Dynamic(c) },
		"ffn_bwd_w13t_dyn":   func() (*refkernels.Kernel, error) { return refkernels.FFNBwdW13tDynamic(c) },
		"qkv_bwd_dynamic":    func() (*refkernels.Kernel, error) { return refkernels.QKVBwdDynamic(c) },
		"sdpa_bwd1_noweight": func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1NoWeight(c) },
	}
}

var benchOrder = []string{"sdpa_fwd_taps", "ffn_fwd_taps", "ffn_bwd", "qkv_bwd", "sdpa_bwd1", "sdpa_bwd2",
	"sdpa_fwd_dynamic", "ffn_w13_dynamic", "ffn_w2_dynamic", "ffn_bwd_w13t_dyn", "qkv_bwd_dynamic", "sdpa_bwd1_noweight"}

func BenchmarkKernels(b *testing.B) {
	b.Logf("BLAS: %s", cpu.BLASName())
	gens := benchKernels(b)
	for _, mode := range []struct {
		name string
		n    Numerics
	}{{"fp16", FP16}, {"fp32", FP32}} {
		for _, name := range benchOrder {
			b.Run(name+"/"+mode.name, func(b *testing.B) {
				rk, err := gens[name]()
				if err != nil {
					b.Fatal(err)
				}
				kk, err := New(Options{Relaxed: true, Numerics: mode.n}).Compile(rk.Program, rk.Weights)
				if err != nil {
					b.Fatal(err)
				}
				k := kk.(*Kernel)
				defer k.Close()
				in := k.Inputs()[0]
				rng := rand.New(rand.NewPCG(3, 4))
				vals := make([]float32, in.Channels()*in.Spatial())
				for i := range vals {
					vals[i] = float32(rng.Float64()*2-1) * 0.5
				}
				if err := in.WriteChannels(0, in.Channels(), vals); err != nil {
					b.Fatal(err)
				}
				sec := evalEach(b, k)
				b.ReportMetric(sec*1e3, "ms/eval")
				b.ReportMetric(k.FLOPs()/sec/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkBindings compares two ways of running one program for each of 12 layers: 12 bindings of
// one compiled kernel, and 12 compiled copies, for the dynamic-weights attention forward at dim 256,
// 4 heads, seq 128 (hidden 704 sizes the FFN, which this kernel does not have). It reports the time
// to make the 12 (one compile and 11 Binds, or 12 compiles), the bytes they allocate and the bytes
// they keep live (heap after a collection; the backend's shared scratch is part of it, reported alone
// too), the compiles, and the time of one eval of each of the 12.
//
//	OPENBLAS_CORETYPE=SkylakeX go test -run - -bench Bindings -benchtime 20x ./ane/emulator
func BenchmarkBindings(b *testing.B) {
	b.Logf("BLAS: %s", cpu.BLASName())
	const layers = 12
	rk, err := refkernels.SDPAFwdDynamic(refkernels.Config{Dim: 256, Hidden: 704, Heads: 4, Seq: 128})
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"bindings", "copies"} {
		b.Run(mode, func(b *testing.B) {
			be := New(Options{Relaxed: true})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			var all []ane.Binding
			for i := range layers {
				var bd ane.Binding
				var err error
				if mode == "copies" || i == 0 {
					bd, err = be.Compile(rk.Program, rk.Weights)
				} else {
					bd, err = all[0].(*Kernel).Bind()
				}
				if err != nil {
					b.Fatal(err)
				}
				all = append(all, bd)
			}
			made := time.Since(start)
			runtime.GC()
			runtime.ReadMemStats(&after)
			defer func() {
				for i := len(all) - 1; i >= 0; i-- {
					all[i].Close()
				}
			}()
			rng := rand.New(rand.NewPCG(7, 8))
			for _, bd := range all {
				in := bd.Inputs()[0]
				vals := make([]float32, in.Channels()*in.Spatial())
				for i := range vals {
					vals[i] = float32(rng.Float64()*2-1) * 0.1
				}
				if err := in.WriteChannels(0, in.Channels(), vals); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			evalAll := func() {
				for _, bd := range all {
					if err := bd.Eval(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			evalAll()
			b.ResetTimer()
			for range b.N {
				evalAll()
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/12evals")
			b.ReportMetric(made.Seconds()*1e3, "make-ms")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc), "make-alloc-B")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)), "live-B")
			b.ReportMetric(float64(be.ar.scratchBytes()), "scratch-B")
			b.ReportMetric(float64(be.Compiles()), "compiles")
		})
	}
}

// BenchmarkEvalOverhead measures what an eval costs beyond its arithmetic: elementwiseChain's
// programs of n relus on one fp16 [1, 32, 1, 32] tensor, for n = 1 and 16 (the emulator runs such a
// chain as one step). It reports µs per eval: the n = 1 figure is about the fixed cost of an eval
// (input and output transfers, dispatch), the difference over 15 one op's.
//
//	go test -run - -bench EvalOverhead ./ane/emulator
func BenchmarkEvalOverhead(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("ops=%d", n), func(b *testing.B) {
			k := compileText(b, Options{Numerics: FP16}, elementwiseChain(n))
			defer k.Close()
			b.ReportMetric(evalEach(b, k)*1e6, "µs/eval")
		})
	}
}

// evalEach evaluates k once untimed, then b.N times, and returns the seconds per eval.
func evalEach(b *testing.B, k *Kernel) float64 {
	ctx := context.Background()
	if err := k.Eval(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if err := k.Eval(ctx); err != nil {
			b.Fatal(err)
		}
	}
	return b.Elapsed().Seconds() / float64(b.N)
}

// BenchmarkSoftmaxGrad: the softmax gradient mil.Grad derives, fused, at the language model's default
// attention (4 heads x 8 sequences, seq 128: 4096 rows of 128), fp16 numerics.
func BenchmarkSoftmaxGrad(b *testing.B) {
	const n = 128
	gr := derivedSoftmaxGrad(b, 32, 128, n)
	k, err := compileWith(gr.Backward.Funcs[0], gr.BackwardWeights, Options{Numerics: FP16, Relaxed: true}, true)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range k.Inputs() {
		v := make([]float32, s.Channels()*s.Spatial())
		for i := range v {
			v[i] = float32(rng.Float64()) / n
		}
		if err := s.WriteChannels(0, s.Channels(), v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(evalEach(b, k)*1e3, "ms/eval")
}
