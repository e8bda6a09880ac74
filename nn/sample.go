package nn

import (
	"fmt"
	"math"
	"sort"
)

// SampleLogits picks an index from logits as llama2.c's run.c samples the next token: the largest
// (the first of equals) when temperature is 0; else from p = softmax(logits / temperature),
// restricted to the nucleus when topP < 1 (the most probable indices, in order, until their mass
// reaches topP; ties in index order), with u, a uniform draw in [0, 1], scaled to the kept mass.
// probs is scratch of len(logits) (nil allocates).
func SampleLogits(logits, probs []float32, temperature, topP, u float64) (int, error) {
	n := len(logits)
	if n == 0 {
		return 0, fmt.Errorf("sample: no logits")
	}
	if !(temperature >= 0) || !(topP > 0 && topP <= 1) || !(u >= 0 && u <= 1) {
		return 0, fmt.Errorf("sample: temperature %g must be at least 0, top_p %g in (0, 1], u %g in [0, 1]", temperature, topP, u)
	}
	if temperature == 0 {
		best := 0
		for i, v := range logits {
			if v > logits[best] {
				best = i
			}
		}
		return best, nil
	}
	if len(probs) < n {
		probs = make([]float32, n)
	}
	probs = probs[:n]
	inv := float32(1 / temperature)
	for i, v := range logits {
		probs[i] = v * inv
	}
	softmaxRow(probs, probs)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	kept := order
	if topP < 1 {
		sort.SliceStable(order, func(a, b int) bool { return probs[order[a]] > probs[order[b]] })
		mass := 0.0
		for i, j := range order {
			mass += float64(probs[j])
			if mass >= topP {
				kept = order[:i+1]
				break
			}
		}
	}
	total := 0.0
	for _, j := range kept {
		total += float64(probs[j])
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return 0, fmt.Errorf("sample: the probabilities sum to %g (logits with inf or NaN?)", total)
	}
	r, acc := u*total, 0.0
	for _, j := range kept {
		acc += float64(probs[j])
		if r < acc {
			return j, nil
		}
	}
	return kept[len(kept)-1], nil
}
