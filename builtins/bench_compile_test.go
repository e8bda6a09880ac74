package builtins

import (
	"context"
	"io"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
)

// layerKernelsSrc builds the five weight-bearing kernels of scripts/train_layer.star at the reference
// sizes, as the script does before every batch: the Starlark kernel builders of lib/layer_kernels.star
// with the weights of lib/model.star.
const layerKernelsSrc = `
load("lib/layer_kernels.star", "causal_mask", "ffn_bwd", "ffn_fwd_taps", "qkv_bwd", "sdpa_bwd1", "sdpa_fwd_taps")
load("lib/model.star", "init_weights")
P = struct(dim = 768, hidden = 2048, heads = 12, seq = 512)
W = init_weights(P)
MASK = causal_mask(P.seq)
def build():
    return [gen[0] for gen in [sdpa_fwd_taps(P, W, MASK), ffn_fwd_taps(P, W), ffn_bwd(P, W), sdpa_bwd1(P, W, MASK), qkv_bwd(P, W)]]
`

// layerKernels prepares a session that has run layerKernelsSrc and returns a function that builds the
// five programs (Starlark builders, weight transposes, weight files and the final check of Build).
func layerKernels(b *testing.B) (build func() ([]*mil.Program, []mil.Weights), s *session) {
	s = &session{cfg: &Config{BackendName: "emulator"}, ctx: context.Background(), rng: newRNG(1), loads: map[string]*loadEntry{}}
	s.out = &lineWriter{w: io.Discard}
	s.predeclared = s.makePredeclared()
	th := s.newThread("bench")
	// load() paths are relative to the script's folder: the scripts' own library.
	g, err := starlark.ExecFileOptions(FileOptions, th, "../scripts/bench_compile.star", layerKernelsSrc, s.predeclared)
	if err != nil {
		b.Fatal(err)
	}
	fn := g["build"]
	build = func() ([]*mil.Program, []mil.Weights) {
		v, err := starlark.Call(th, fn, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		l := v.(*starlark.List)
		progs := make([]*mil.Program, l.Len())
		ws := make([]mil.Weights, l.Len())
		for i := range progs {
			progs[i], ws[i], err = l.Index(i).(*milProgram).build("bench")
			if err != nil {
				b.Fatal(err)
			}
		}
		return progs, ws
	}
	return build, s
}

// BenchmarkLayerKernelsBuild times building train_layer.star's five weight-bearing programs with
// their weight files at dim 768, hidden 2048, heads 12, seq 512, without compiling them.
func BenchmarkLayerKernelsBuild(b *testing.B) {
	build, _ := layerKernels(b)
	b.ResetTimer()
	for b.Loop() {
		build()
	}
}

// BenchmarkLayerKernelsCompile is BenchmarkLayerKernelsBuild plus compiling the five programs on the
// emulator: what one batch of train_layer.star spends before it trains.
func BenchmarkLayerKernelsCompile(b *testing.B) {
	build, s := layerKernels(b)
	be, err := s.getBackend("bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		progs, ws := build()
		ks := make([]ane.Kernel, len(progs))
		for i, p := range progs {
			if ks[i], err = be.Compile(p, ws[i]); err != nil {
				b.Fatal(err)
			}
		}
		for _, k := range ks {
			if err := k.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
