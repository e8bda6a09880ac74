package optim

import (
	"math"

	"github.com/anestar/anestar/internal/par"
)

// AdaGrad scales each element's step by its accumulated squared gradients:
//
//	s += g^2
//	w -= lr * g / (sqrt(s) + eps)
//
// as torch.optim.Adagrad (with no learning-rate decay) and the reference
// library do.
type AdaGrad struct {
	Eps   float32   // added to the root, e.g. 1e-10
	Sum   []float32 // s, the running sum of squares
	Steps int       // updates applied
}

var _ Optimizer = (*AdaGrad)(nil)

// NewAdaGrad returns AdaGrad for n parameters.
func NewAdaGrad(n int, eps float32) *AdaGrad {
	return &AdaGrad{Eps: eps, Sum: make([]float32, n)}
}

// Name implements Optimizer.
func (o *AdaGrad) Name() string { return "adagrad" }

// Step implements Optimizer.
func (o *AdaGrad) Step(w, g []float32, lr float32) error { return o.StepScaled(w, g, lr, 1) }

// StepScaled implements Optimizer.
func (o *AdaGrad) StepScaled(w, g []float32, lr, gscale float32) error {
	if err := stepCheck("AdaGrad", len(o.Sum), w, g, lr, gscale); err != nil {
		return err
	}
	par.Grained(len(w), optGrain, func(lo, hi int) {
		wr, gr, sr := w[lo:hi], g[lo:hi], o.Sum[lo:hi]
		for i, gi := range gr {
			gi = float32(gi * gscale)
			s := sr[i] + gi*gi
			sr[i] = s
			wr[i] -= lr * gi / (sqrt32(s) + o.Eps)
		}
	})
	o.Steps++
	return nil
}

// State implements Optimizer.
func (o *AdaGrad) State() State { return State{Steps: o.Steps, Slots: []Slot{{"sum", o.Sum}}} }

// SetState implements Optimizer.
func (o *AdaGrad) SetState(s State) error { return setState("AdaGrad", &o.Steps, o.State().Slots, s) }

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
