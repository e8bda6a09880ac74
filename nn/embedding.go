package nn

import "fmt"

// Embedding gathers the rows of table [vocab, dim] named by ids into out,
// channel-first [dim, len(ids)]: out[c, t] = table[ids[t], c], the layout of
// a kernel's activations. Every id must be in [0, vocab).
func Embedding(out, table []float32, ids []int, vocab, dim int) error {
	if err := embeddingCheck("nn.Embedding", "out", out, table, ids, vocab, dim); err != nil {
		return err
	}
	T := len(ids)
	for t, id := range ids {
		row := table[id*dim : (id+1)*dim]
		for c, v := range row {
			out[c*T+t] = v
		}
	}
	return nil
}

// EmbeddingBackward is Embedding's gradient, a scatter-add: for every
// position t, dtable[ids[t], c] += dy[c, t], with dy channel-first
// [dim, len(ids)]. Repeated ids add up.
func EmbeddingBackward(dtable, dy []float32, ids []int, vocab, dim int) error {
	if err := embeddingCheck("nn.EmbeddingBackward", "dy", dy, dtable, ids, vocab, dim); err != nil {
		return err
	}
	T := len(ids)
	for t, id := range ids {
		row := dtable[id*dim : (id+1)*dim]
		for c := range row {
			row[c] += dy[c*T+t]
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
