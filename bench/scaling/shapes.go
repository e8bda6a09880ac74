package main

import (
	"fmt"
	"strconv"
	"strings"
)

// shape is one model's sizes, the training batch measured at and the steps run by default.
type shape struct {
	name                                            string
	dim, hidden, layers, heads, kvHeads, vocab, seq int
	batch, steps                                    int
}

// family are the llama2.c models' shapes (Karpathy's tinyllamas: stories260K, 15M, 42M, 110M). The
// batches fit anestar's and the peer's peak memory, each in turn, in 24 GB (42M at batch 8 took 13-14 GB
// on each side); the steps are few where a step takes a minute.
var family = []shape{
	{"260K", 64, 172, 5, 8, 4, 512, 512, 8, 8},
	{"15M", 288, 768, 6, 6, 6, 32000, 256, 8, 6},
	{"42M", 512, 1376, 8, 8, 8, 32000, 1024, 4, 5},
	{"110M", 768, 2048, 12, 12, 12, 32000, 1024, 2, 5},
}

// parseShapes reads -shapes: names from family, or name=dim/hidden/layers/heads/kv_heads/vocab/seq/batch.
func parseShapes(list string) ([]shape, error) {
	var out []shape
	seen := map[string]bool{}
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		s, err := parseShape(f)
		if err != nil {
			return nil, err
		}
		if seen[s.name] {
			return nil, fmt.Errorf("-shapes: %s given twice", s.name)
		}
		seen[s.name] = true
		out = append(out, s)
	}
	return out, nil
}

// parseShape reads one entry of -shapes.
func parseShape(f string) (shape, error) {
	name, spec, custom := strings.Cut(f, "=")
	if !custom {
		for _, s := range family {
			if strings.EqualFold(s.name, f) {
				return s, nil
			}
		}
		return shape{}, fmt.Errorf("-shapes: %q is none of 260K, 15M, 42M, 110M (or give name=dim/hidden/layers/heads/kv_heads/vocab/seq/batch)", f)
	}
	parts := strings.Split(spec, "/")
	if name == "" || len(parts) != 8 {
		return shape{}, fmt.Errorf("-shapes: %q: want name=dim/hidden/layers/heads/kv_heads/vocab/seq/batch", f)
	}
	v := make([]int, 8)
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			return shape{}, fmt.Errorf("-shapes: %q: %q is not a positive whole number", f, p)
		}
		v[i] = n
	}
	if v[0]%v[3] != 0 || v[3]%v[4] != 0 {
		return shape{}, fmt.Errorf("-shapes: %q: dim must be a multiple of heads, and heads of kv_heads", f)
	}
	if v[5] > 1<<16 {
		return shape{}, fmt.Errorf("-shapes: %q: vocab %d does not fit uint16 token files", f, v[5])
	}
	return shape{name, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], 4}, nil
}

// parseModels reads the -model flags: a file per shape name, each of a shape in shapes.
func parseModels(flags []string, shapes []shape) (map[string]string, error) {
	out := map[string]string{}
	for _, m := range flags {
		name, file, ok := strings.Cut(m, "=")
		if !ok || file == "" {
			return nil, fmt.Errorf("-model %q: want SHAPE=FILE", m)
		}
		found := false
		for _, s := range shapes {
			if strings.EqualFold(s.name, name) {
				out[s.name], found = file, true
			}
		}
		if !found {
			return nil, fmt.Errorf("-model %q: no shape %s in -shapes", m, name)
		}
	}
	return out, nil
}

// sizes are the shape's model sizes as train_lm.star's parameters (k=v).
func (s shape) sizes() []string {
	return []string{"vocab=" + strconv.Itoa(s.vocab), "dim=" + strconv.Itoa(s.dim), "hidden=" + strconv.Itoa(s.hidden),
		"layers=" + strconv.Itoa(s.layers), "heads=" + strconv.Itoa(s.heads), "kv_heads=" + strconv.Itoa(s.kvHeads),
		"seq=" + strconv.Itoa(s.seq), "batch=" + strconv.Itoa(s.batch)}
}
