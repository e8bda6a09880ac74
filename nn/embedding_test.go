package nn

import (
	"math/rand/v2"
	"testing"
)

// TestEmbeddingBlocksMatchDefinition checks the blocked gather and scatter-add against their
// element-by-element definitions, bit for bit, at sizes that leave a partial block and split the
// positions over par's helpers, with ids repeated (their additions keep the positions' order).
func TestEmbeddingBlocksMatchDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range []struct{ vocab, dim, T int }{{7, 3, 1}, {50, 33, 17}, {40, 300, 1000}, {1024, 256, 1024}} {
		table := randNorm(rng, sz.vocab*sz.dim, 1)
		ids := make([]int, sz.T)
		for i := range ids {
			ids[i] = rng.IntN(sz.vocab)
		}
		out := make([]float32, sz.dim*sz.T)
		if err := Embedding(out, table, ids, sz.vocab, sz.dim); err != nil {
			t.Fatal(err)
		}
		for c := range sz.dim {
			for i, id := range ids {
				if out[c*sz.T+i] != table[id*sz.dim+c] {
					t.Fatalf("%v: out[%d, %d] = %g, want %g", sz, c, i, out[c*sz.T+i], table[id*sz.dim+c])
				}
			}
		}
		dy := randNorm(rng, sz.dim*sz.T, 1)
		got := randNorm(rng, sz.vocab*sz.dim, 1)
		want := append([]float32(nil), got...)
		if err := EmbeddingBackward(got, dy, ids, sz.vocab, sz.dim); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			for c := range sz.dim {
				want[id*sz.dim+c] += dy[c*sz.T+i]
			}
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: dtable[%d] = %g, want %g", sz, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkEmbedding times the language model's gather and scatter-add: 1024 positions of a
// [1024, 256] table.
func BenchmarkEmbedding(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab, dim, T := 1024, 256, 1024
	table := randNorm(rng, vocab*dim, 1)
	ids := make([]int, T)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	out := make([]float32, dim*T)
	b.Run("forward", func(b *testing.B) {
		for b.Loop() {
			if err := Embedding(out, table, ids, vocab, dim); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("backward", func(b *testing.B) {
		for b.Loop() {
			if err := EmbeddingBackward(table, out, ids, vocab, dim); err != nil {
				b.Fatal(err)
			}
		}
	})
}
