package nn

import (
	"fmt"

	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/internal/transpose"
)

// embedBlock is the number of positions Embedding and EmbeddingBackward move at a time: their rows
// gathered side by side into a [embedBlock, dim] buffer that one tiled transpose moves to or from the
// channel-first activations. Element by element, every store went to another channel's row, T floats
// away: at the language model's 1024 positions and 256 channels the gather took 1.5 ms, a cache line
// per value (BenchmarkEmbedding).
const embedBlock = 16

// embedGrain is the number of values from which Embedding splits its positions over par's helpers.
const embedGrain = 1 << 16

// Embedding gathers the rows of table [vocab, dim] named by ids into out,
// channel-first [dim, len(ids)]: out[c, t] = table[ids[t], c], the layout of
// a kernel's activations. Every id must be in [0, vocab).
func Embedding(out, table []float32, ids []int, vocab, dim int) error {
	if err := embeddingCheck("nn.Embedding", "out", out, table, ids, vocab, dim); err != nil {
		return err
	}
	T := len(ids)
	blocks := (T + embedBlock - 1) / embedBlock
	par.Grained(blocks, max(1, embedGrain/(embedBlock*dim)), func(lo, hi int) {
		buf := make([]float32, embedBlock*dim)
		for b := lo; b < hi; b++ {
			t0 := b * embedBlock
			n := min(embedBlock, T-t0)
			for i, id := range ids[t0 : t0+n] {
				copy(buf[i*dim:(i+1)*dim], table[id*dim:(id+1)*dim])
			}
			// cannot fail: the sizes were checked above
			_ = transpose.Transpose(out[t0:], T, buf, dim, n, dim)
		}
	})
	return nil
}

// EmbeddingBackward is Embedding's gradient, a scatter-add: for every
// position t, dtable[ids[t], c] += dy[c, t], with dy channel-first
// [dim, len(ids)]. Repeated ids add up, in the order of their positions.
func EmbeddingBackward(dtable, dy []float32, ids []int, vocab, dim int) error {
	if err := embeddingCheck("nn.EmbeddingBackward", "dy", dy, dtable, ids, vocab, dim); err != nil {
		return err
	}
	T := len(ids)
	buf := make([]float32, embedBlock*dim)
	for t0 := 0; t0 < T; t0 += embedBlock {
		n := min(embedBlock, T-t0)
		// cannot fail: the sizes were checked above
		_ = transpose.Transpose(buf, dim, dy[t0:], T, dim, n)
		for i, id := range ids[t0 : t0+n] {
			row := dtable[id*dim : (id+1)*dim]
			for c, v := range buf[i*dim : (i+1)*dim] {
				row[c] += v
			}
		}
	}
	return nil
}

func embeddingCheck(op, actName string, act, table []float32, ids []int, vocab, dim int) error {
	chk := lengthCheck{op: op}
	chk.dims("vocab, dim", vocab, dim)
	if chk.err != nil {
		return chk.err
	}
	if len(ids) == 0 {
		return fmt.Errorf("%s: no ids", op)
	}
	chk.atLeast("table", table, vocab*dim)
	chk.atLeast(actName, act, dim*len(ids))
	if chk.err != nil {
		return chk.err
	}
	for t, id := range ids {
		if id < 0 || id >= vocab {
			return fmt.Errorf("%s: ids[%d] = %d out of range [0, %d)", op, t, id, vocab)
		}
	}
	return nil
}
