package builtins

import (
	"context"
	"testing"

	"github.com/anestar/anestar/internal/floats"

	"go.starlark.net/starlark"
)

// BenchmarkAddStarlark times x.add_(y) on [768, 512] tensors called from Starlark; compare with
// BenchmarkAddGo, the bare Go loop, to see the per-call overhead of the builtin layer.
func BenchmarkAddStarlark(b *testing.B) {
	s := &session{cfg: &Config{}, ctx: context.Background(), rng: newRNG(0), loads: map[string]*loadEntry{}}
	s.predeclared = s.makePredeclared()
	th := s.newThread("bench")
	mk, err := starlark.ExprFuncOptions(FileOptions, "bench.star", "lambda x, y, n: [x.add_(y) for i in range(n)]", s.predeclared)
	if err != nil {
		b.Fatal(err)
	}
	fn, err := starlark.Call(th, mk, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	x, _ := NewTensor(768, 512)
	y, _ := NewTensor(768, 512)
	b.ResetTimer()
	if _, err := starlark.Call(th, fn, starlark.Tuple{x, y, starlark.MakeInt(b.N)}, nil); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkAddGo(b *testing.B) {
	x := make([]float32, 768*512)
	y := make([]float32, 768*512)
	for i := 0; i < b.N; i++ {
		floats.Apply(floats.Add, x, y)
	}
}
