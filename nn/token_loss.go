package nn

import (
	"fmt"
	"math"

	"github.com/anestar/anestar/internal/fastexp"
	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/internal/vec"
)

// SoftmaxCrossEntropy returns the summed next-token cross-entropy of the
// rows of logits [rows, cols] against targets (one class index per row):
// sum_r -log softmax(logits[r])[targets[r]], in float64 over float32
// exponentials (fastexp, within 2 ulp). grad, when not
// nil, gets scale * (softmax(logits[r]) - onehot(targets[r])) per row; it may
// be logits itself, so a language model's classifier output becomes its
// gradient in place and the logits of one sequence are all it ever holds.
// A summed loss and a free scale let the caller average over a batch of
// sequences and fold in a loss scale.
func SoftmaxCrossEntropy(grad, logits []float32, targets []int, rows, cols int, scale float32) (float64, error) {
	if len(targets) != rows && rows > 0 {
		return 0, fmt.Errorf("nn.SoftmaxCrossEntropy: %d targets for %d rows", len(targets), rows)
	}
	if err := labelLossLengths("nn.SoftmaxCrossEntropy", "targets", grad, logits, targets, rows, cols); err != nil {
		return 0, err
	}
	sums := make([]float64, rows)
	par.Grained(rows, max(1, elemGrain/cols), func(lo, hi int) {
		var scratch []float32 // the exponentials of a row when there is no gradient to hold them
		if grad == nil {
			scratch = make([]float32, cols)
		}
		for r := lo; r < hi; r++ {
			z := logits[r*cols : (r+1)*cols]
			l := targets[r]
			zl := float64(z[l])
			m := rowMax(z)
			g := scratch
			if grad != nil {
				g = grad[r*cols : (r+1)*cols] // may be z: Shifted reads each element before it writes it
			}
			fastexp.Shifted(g, z, m, false) // e^(z - m) in float32, within 2 ulp
			sum := sum64(g)
			if grad != nil {
				inv := float32(float64(scale) / sum)
				for j := vec.VS(vec.Mul, g, g, inv); j < len(g); j++ {
					g[j] *= inv
				}
				g[l] -= scale
			}
			sums[r] = math.Log(sum) + float64(m) - zl
		}
	})
	var loss float64
	for _, s := range sums {
		loss += s
	}
	return loss, nil
}

// AllFinite reports whether every element of every slice is finite (no inf
// or NaN): the found-inf check of dynamic loss scaling.
func AllFinite(xs ...[]float32) bool {
	for _, x := range xs {
		for _, v := range x {
			if v-v != 0 { // inf - inf and NaN - NaN are NaN
				return false
			}
		}
	}
	return true
}
