package ckpt

import (
	"io"
	"path/filepath"
	"runtime"
	"testing"
)

// stories15M is a model of llama2.c's stories15M.bin's shapes with deterministic weights.
func stories15M() *Llama2Model {
	c := Llama2Config{Dim: 288, Hidden: 768, Layers: 6, Heads: 6, KVHeads: 6, Vocab: 32000, MaxSeqLen: 256, Shared: true}
	m := &Llama2Model{Config: c, Weights: map[string][]float32{}}
	for i, t := range c.Tensors() {
		w := make([]float32, product(t.Shape))
		for j := range w {
			w[j] = float32((i+j)%97-48) / 64
		}
		m.Weights[t.Name] = w
	}
	return m
}

func llama2Bytes(m *Llama2Model) int64 {
	n := 0
	for _, w := range m.Weights {
		n += 4 * len(w)
	}
	return int64(n)
}

// TestLlama2ReadMemory: reading a model allocates its weights once and little else (a 64 KiB
// buffer and the map), not a copy of the file.
func TestLlama2ReadMemory(t *testing.T) {
	e := loadLlama2Expected(t)
	for _, want := range e.Models {
		path := filepath.Join(llama2Dir, want.File)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, err := ReadLlama2(path)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		got, weights := after.TotalAlloc-before.TotalAlloc, uint64(llama2Bytes(m))
		t.Logf("%s: %d bytes allocated for %d bytes of weights", want.File, got, weights)
		if got > weights+128<<10 {
			t.Errorf("%s: reading allocated %d bytes for %d bytes of weights", want.File, got, weights)
		}
	}
}

func BenchmarkReadLlama2Stories15M(b *testing.B) {
	m := stories15M()
	path := filepath.Join(b.TempDir(), "stories15M.bin")
	if err := SaveLlama2(path, m, 0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(llama2Bytes(m))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadLlama2(path); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeLlama2Stories15M(b *testing.B) {
	m := stories15M()
	b.SetBytes(llama2Bytes(m))
	b.ReportAllocs()
	for b.Loop() {
		if err := EncodeLlama2(io.Discard, m, 0); err != nil {
			b.Fatal(err)
		}
	}
}
