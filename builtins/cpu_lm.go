package builtins

import (
	"fmt"
	"math"

	"github.com/anestar/anestar/nn"
	"go.starlark.net/starlark"
)

// cpuLMFns are the host builtins of a language model: the embedding, the classifier's loss, RoPE
// tables and the found-inf check of loss scaling.
func cpuLMFns() []fnDef {
	return []fnDef{
		{sig: "embedding(out, table, ids)", doc: "Gathers the rows of table [vocab, dim] named by ids (a list of ints or a 1-D tensor of token ids) into out, " +
			"channel-first [dim, len(ids)]: out[c, t] = table[ids[t], c]. Returns out.", fn: cpuEmbedding},
		{sig: "embedding_backward(dtable, dy, ids)", doc: "The gradient of embedding, a scatter-add: dtable[ids[t], c] += dy[c, t] for the channel-first " +
			"[dim, len(ids)] dy; repeated ids add up. Returns dtable.", fn: cpuEmbeddingBackward},
		{sig: "softmax_cross_entropy(logits, targets, grad = None, scale = 1.0)", doc: "The summed cross-entropy of the rows of 2-D logits [rows, vocab] " +
			"against targets (one class index per row: a list of ints or a 1-D tensor of token ids), a float: sum over rows of -log softmax(row)[target]. " +
			"grad, when given, gets scale * (softmax(row) - onehot(target)); it may be logits itself, so that one sequence's logits become their gradient in place. " +
			"A sum and a scale let a script average over a batch and fold in a loss scale.", fn: cpuSoftmaxCrossEntropy},
		{sig: "rope_tables(head_dim, seq, heads = 1, theta = 10000.0)", doc: "The rotary position tables of llama2.c, a new channel-first [heads*head_dim, seq] tensor: " +
			"row h*head_dim/2 + i of the first half holds cos(t * theta^(-2i/head_dim)) at column t, the same row of the second half the sine. " +
			"Position t rotates each head's adjacent pair (x[2i], x[2i+1]) by that angle: x'[2i] = x[2i] cos - x[2i+1] sin, x'[2i+1] = x[2i] sin + x[2i+1] cos.", fn: cpuRoPETables},
		{sig: "all_finite(tensors)", doc: "True when no element of a list of tensors is inf or NaN: the found-inf check of dynamic loss scaling.", fn: cpuAllFinite},
		{sig: "unscale_clip(grads, scale, max_norm = 0.0)", doc: "Divides a list of loss-scaled gradients in place by scale and, when max_norm > 0, clips their global norm to it, " +
			"in one pass after the norm; returns the global norm of the unscaled gradients. When that is inf or NaN (an element is) nothing changes: " +
			"dynamic loss scaling's found-inf check, all_finite, unscale and clip_norm in two passes over the gradients instead of four.", fn: cpuUnscaleClip},
		{sig: "clip_factor(grads, scale, max_norm = 0.0)", doc: "unscale_clip's first pass alone, the gradients left as they are: a tuple (norm, factor), the global norm of the " +
			"gradients divided by scale and the factor unscale_clip would multiply them by (1/scale, times max_norm/norm when the norm exceeds max_norm > 0). " +
			"An optimizer's step(grads, lr, grad_scale = factor) then applies it as it reads them, with unscale_clip's bits in one pass over the gradients less. " +
			"A norm of inf or NaN (an element is) means: skip the step.", fn: cpuClipFactor},
	}
}

// tokenIDs unpacks ids given as a list or tuple of ints or as a tensor of integral values.
func tokenIDs(fn, what string, v starlark.Value) ([]int, error) {
	if t, ok := v.(*Tensor); ok {
		if err := t.readable(fn); err != nil {
			return nil, err
		}
		ids := make([]int, len(t.data))
		for i, f := range t.data {
			if f != float32(math.Trunc(float64(f))) || f < 0 || f >= 1<<24 {
				return nil, fmt.Errorf("%s: %s[%d] = %g is not a token id (an integer in [0, 2^24))", fn, what, i, f)
			}
			ids[i] = int(f)
		}
		return ids, nil
	}
	if typ := v.Type(); typ != "list" && typ != "tuple" {
		return nil, fmt.Errorf("%s: for parameter %s: got %s, want a list of ints or a tensor", fn, what, v.Type())
	}
	var ids shapeArg
	if err := ids.Unpack(v); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", fn, what, err)
	}
	return ids, nil
}

// embeddingArgs unpacks (table-like, activation, ids) and checks table is 2-D [vocab, dim] and act [dim, len(ids)].
func embeddingArgs(fn, actName, tableName string, args starlark.Tuple, kwargs []starlark.Tuple) (act, table *Tensor, ids []int, err error) {
	var idv starlark.Value
	var first, second *Tensor
	names := []any{tableName, &first, actName, &second, "ids", &idv}
	if actName == "out" {
		names = []any{actName, &first, tableName, &second, "ids", &idv}
	}
	if err := starlark.UnpackArgs(fn, args, kwargs, names...); err != nil {
		return nil, nil, nil, err
	}
	act, table = second, first
	if actName == "out" {
		act, table = first, second
	}
	if ids, err = tokenIDs(fn, "ids", idv); err != nil {
		return nil, nil, nil, err
	}
	if len(table.shape) != 2 {
		return nil, nil, nil, fmt.Errorf("%s: %s %s is not 2-D [vocab, dim]", fn, tableName, table)
	}
	if len(ids) == 0 || act.Size() != table.shape[1]*len(ids) || act.shape[0] != table.shape[1] {
		return nil, nil, nil, fmt.Errorf("%s: %s %s, want [%d, %d]: dim %d of %s %s by %d ids", fn, actName, act,
			table.shape[1], len(ids), table.shape[1], tableName, table, len(ids))
	}
	if act.st == table.st {
		return nil, nil, nil, fmt.Errorf("%s: %s shares storage with %s", fn, actName, tableName)
	}
	return act, table, ids, nil
}

func cpuEmbedding(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	out, table, ids, err := embeddingArgs(b.Name(), "out", "table", args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{table}, out); err != nil {
		return nil, err
	}
	if err := nn.Embedding(out.data, table.data, ids, table.shape[0], table.shape[1]); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return out, nil
}

func cpuEmbeddingBackward(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	dy, dtable, ids, err := embeddingArgs(b.Name(), "dy", "dtable", args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{dy}, dtable); err != nil {
		return nil, err
	}
	if err := nn.EmbeddingBackward(dtable.data, dy.data, ids, dtable.shape[0], dtable.shape[1]); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return dtable, nil
}

func cpuSoftmaxCrossEntropy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var logits *Tensor
	var tv, grad starlark.Value
	scale := number(1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "logits", &logits, "targets", &tv, "grad?", &grad, "scale?", &scale); err != nil {
		return nil, err
	}
	r, c, g, err := logitsArgs(b.Name(), logits, grad)
	if err != nil {
		return nil, err
	}
	targets, err := tokenIDs(b.Name(), "targets", tv)
	if err != nil {
		return nil, err
	}
	l, err := nn.SoftmaxCrossEntropy(g, logits.data, targets, r, c, float32(scale))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.Float(l), nil
}

func cpuRoPETables(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var headDim, seq int
	heads := 1
	theta := number(10000)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "head_dim", &headDim, "seq", &seq, "heads?", &heads, "theta?", &theta); err != nil {
		return nil, err
	}
	if headDim < 1 || seq < 1 || heads < 1 || headDim > 1<<16 || seq > 1<<20 || heads > 1<<12 {
		return nil, fmt.Errorf("%s: head_dim = %d, seq = %d, heads = %d: want positive sizes (head_dim <= 65536, seq <= 2^20, heads <= 4096)", b.Name(), headDim, seq, heads)
	}
	t, err := NewTensor(heads*headDim, seq)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if err := nn.RoPETables(t.data, headDim, heads, seq, float64(theta)); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return t, nil
}

func cpuAllFinite(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	gs, err := readSlices(b, "tensors", args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.Bool(nn.AllFinite(gs...)), nil
}

// clipArgs unpacks unscale_clip's and clip_factor's (grads, scale, max_norm = 0.0), the gradients to
// be written when write.
func clipArgs(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, write bool) ([][]float32, float32, float32, error) {
	var grads starlark.Value
	var scale, maxNorm number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "grads", &grads, "scale", &scale, "max_norm?", &maxNorm); err != nil {
		return nil, 0, 0, err
	}
	gs, err := gradSlices(b.Name(), grads, write)
	return gs, float32(scale), float32(maxNorm), err
}

func cpuUnscaleClip(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	gs, scale, maxNorm, err := clipArgs(b, args, kwargs, true)
	if err != nil {
		return nil, err
	}
	n, err := nn.UnscaleClip(scale, maxNorm, gs...)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "nn.UnscaleClip: "))
	}
	return starlark.Float(n), nil
}

func cpuClipFactor(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	gs, scale, maxNorm, err := clipArgs(b, args, kwargs, false)
	if err != nil {
		return nil, err
	}
	n, f, err := nn.ClipFactor(scale, maxNorm, gs...)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.Tuple{starlark.Float(n), starlark.Float(f)}, nil
}
