package builtins

import (
	"context"
	"io"
	"testing"

	"go.starlark.net/starlark"
)

// layerKernelsSrc builds the four kernels of scripts/train_layer.star at the reference sizes, as the
// script does before every optimizer window: train.star's layer_programs with the weights of
// lib/model.star baked in (nn.star's pieces, the backward programs by mil.grad); compile_all also
// compiles them as the script does (ane.compile: packing and the emulator's compile) and closes them.
const layerKernelsSrc = `
load("lib/train.star", "layer_compile", "layer_programs")
load("lib/model.star", "init_weights")
P = struct(dim = 768, hidden = 2048, heads = 12, seq = 512)
W = init_weights(P)
def build():
    g = layer_programs(P, W)
    return [g.attn.fwd, g.attn.bwd, g.ffn.fwd, g.ffn.bwd]
def compile_all():
    for k in layer_compile(layer_programs(P, W)).K.values():
        k.close()
`

// layerKernels prepares a session that has run layerKernelsSrc and returns a function that calls
// its function name.
func layerKernels(b *testing.B, name string) func() starlark.Value {
	s := &session{cfg: &Config{BackendName: "emulator"}, ctx: context.Background(), rng: newRNG(1), loads: map[string]*loadEntry{}}
	s.out = &lineWriter{w: io.Discard}
	s.predeclared = s.makePredeclared()
	th := s.newThread("bench")
	// load() paths are relative to the script's folder: the scripts' own library.
	g, err := starlark.ExecFileOptions(FileOptions, th, "../scripts/bench_compile.star", layerKernelsSrc, s.predeclared)
	if err != nil {
		b.Fatal(err)
	}
	fn := g[name]
	return func() starlark.Value {
		v, err := starlark.Call(th, fn, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
}

// BenchmarkLayerKernelsBuild times building train_layer.star's four programs (the Starlark builders,
// mil.grad, the baked weights) and their weight files at dim 768, hidden 2048, heads 12, seq 512,
// without compiling them.
func BenchmarkLayerKernelsBuild(b *testing.B) {
	build := layerKernels(b, "build")
	b.ResetTimer()
	for b.Loop() {
		l := build().(*starlark.List)
		for i := range l.Len() {
			if _, _, err := l.Index(i).(*milProgram).build("bench"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkLayerKernelsCompile builds and compiles the four programs on the emulator, as ane.compile
// does: what one optimizer window of train_layer.star spends before it trains.
func BenchmarkLayerKernelsCompile(b *testing.B) {
	compileAll := layerKernels(b, "compile_all")
	b.ResetTimer()
	for b.Loop() {
		compileAll()
	}
}
