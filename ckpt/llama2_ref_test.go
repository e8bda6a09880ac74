package ckpt

import "math"

// llama2Forward is a float64 reference forward pass of a llama2.c model, written from the
// formulas of llama2.c's model.py: it returns the logits [len(tokens)][vocab] of every position
// of tokens, each attending causally to the positions before it. It checks the reader: a
// tensor read into the wrong place, transposed or from the wrong offset changes the logits.
func llama2Forward(m *Llama2Model, tokens []int) [][]float64 {
	c := m.Config
	T, D, hd := len(tokens), c.Dim, c.HeadDim()
	rep := c.Heads / c.KVHeads
	w := func(name string) []float32 { return m.Weights[name] }
	lw := func(l int, kind string) []float32 { return w(Llama2LayerName(l, kind)) }
	// matvec returns W x for W [rows, len(x)] row-major.
	matvec := func(W []float32, x []float64) []float64 {
		n := len(x)
		out := make([]float64, len(W)/n)
		for r := range out {
			s := 0.0
			for j, xj := range x {
				s += float64(W[r*n+j]) * xj
			}
			out[r] = s
		}
		return out
	}
	rmsnorm := func(x []float64, g []float32) []float64 {
		ss := 0.0
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+1e-5)
		out := make([]float64, len(x))
		for i, v := range x {
			out[i] = v * inv * float64(g[i])
		}
		return out
	}
	rope := func(v []float64, pos int) {
		for i := 0; i < len(v); i += 2 {
			j := i % hd
			a := float64(pos) * math.Pow(10000, -float64(j)/float64(hd))
			c, s := math.Cos(a), math.Sin(a)
			v[i], v[i+1] = v[i]*c-v[i+1]*s, v[i]*s+v[i+1]*c
		}
	}
	x := make([][]float64, T)
	emb := w(Llama2Embedding)
	for t, tok := range tokens {
		x[t] = make([]float64, D)
		for i := range x[t] {
			x[t][i] = float64(emb[tok*D+i])
		}
	}
	for l := 0; l < c.Layers; l++ {
		q, k, v := make([][]float64, T), make([][]float64, T), make([][]float64, T)
		for t := range T {
			h := rmsnorm(x[t], lw(l, "attention_norm.weight"))
			q[t] = matvec(lw(l, "attention.wq.weight"), h)
			k[t] = matvec(lw(l, "attention.wk.weight"), h)
			v[t] = matvec(lw(l, "attention.wv.weight"), h)
			rope(q[t], t)
			rope(k[t], t)
		}
		for t := range T {
			att := make([]float64, D)
			for head := 0; head < c.Heads; head++ {
				kv := (head / rep) * hd
				scores := make([]float64, t+1)
				mx := math.Inf(-1)
				for s := 0; s <= t; s++ {
					d := 0.0
					for i := 0; i < hd; i++ {
						d += q[t][head*hd+i] * k[s][kv+i]
					}
					scores[s] = d / math.Sqrt(float64(hd))
					mx = math.Max(mx, scores[s])
				}
				sum := 0.0
				for s := range scores {
					scores[s] = math.Exp(scores[s] - mx)
					sum += scores[s]
				}
				for s := range scores {
					for i := 0; i < hd; i++ {
						att[head*hd+i] += scores[s] / sum * v[s][kv+i]
					}
				}
			}
			o := matvec(lw(l, "attention.wo.weight"), att)
			for i := range o {
				x[t][i] += o[i]
			}
			h := rmsnorm(x[t], lw(l, "ffn_norm.weight"))
			a := matvec(lw(l, "feed_forward.w1.weight"), h)
			b := matvec(lw(l, "feed_forward.w3.weight"), h)
			for i := range a {
				a[i] = a[i] / (1 + math.Exp(-a[i])) * b[i]
			}
			f := matvec(lw(l, "feed_forward.w2.weight"), a)
			for i := range f {
				x[t][i] += f[i]
			}
		}
	}
	cls := emb
	if !c.Shared {
		cls = w(Llama2Output)
	}
	out := make([][]float64, T)
	for t := range T {
		out[t] = matvec(cls, rmsnorm(x[t], w(Llama2FinalNorm)))
	}
	return out
}

// llama2Greedy continues prompt greedily as llama2.c's run.c does: feed the prompt, then the
// argmax of the last position's logits, until maxLen tokens have been fed or BOS (1) comes out;
// the token picked after the last one fed is kept. It returns the picked tokens.
func llama2Greedy(m *Llama2Model, prompt []int, maxLen int) []int {
	ids := append([]int{}, prompt...)
	var gen []int
	for len(ids) <= maxLen {
		lg := llama2Forward(m, ids)
		last := lg[len(lg)-1]
		best := 0
		for i, v := range last {
			if v > last[best] {
				best = i
			}
		}
		if best == 1 {
			break
		}
		gen = append(gen, best)
		ids = append(ids, best)
	}
	return gen
}
