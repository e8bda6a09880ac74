package optim

import (
	"math"

	"github.com/anestar/anestar/internal/par"
)

// Adam is adaptive moment estimation with bias correction, as the
// reference's adam_update computes it. At step t (1 for the first update):
//
//	m = b1*m + (1-b1)*g
//	v = b2*v + (1-b2)*g^2
//	w -= lr * (m/(1-b1^t)) / (sqrt(v/(1-b2^t)) + eps)
//
// With WeightDecay > 0 it is AdamW: before the update w -= lr*WeightDecay*w,
// decoupled from the moments (torch.optim.AdamW); WeightDecay 0 is plain
// Adam (torch.optim.Adam).
type Adam struct {
	Beta1, Beta2 float32   // moment decays, typically 0.9 and 0.999
	Eps          float32   // added to the root, typically 1e-8
	WeightDecay  float32   // decoupled weight decay (AdamW); 0 for Adam
	M, V         []float32 // first and second moments
	Steps        int       // updates applied: t of the last update
}

var _ Optimizer = (*Adam)(nil)

// NewAdam returns Adam for n parameters with zero moments.
func NewAdam(n int, beta1, beta2, eps float32) *Adam {
	return &Adam{Beta1: beta1, Beta2: beta2, Eps: eps, M: make([]float32, n), V: make([]float32, n)}
}

// NewAdamW returns Adam with decoupled weight decay for n parameters.
func NewAdamW(n int, beta1, beta2, eps, weightDecay float32) *Adam {
	o := NewAdam(n, beta1, beta2, eps)
	o.WeightDecay = weightDecay
	return o
}

// Name implements Optimizer: "adamw" when WeightDecay is set, else "adam".
func (o *Adam) Name() string {
	if o.WeightDecay != 0 {
		return "adamw"
	}
	return "adam"
}

// Step implements Optimizer.
func (o *Adam) Step(w, g []float32, lr float32) error { return o.StepScaled(w, g, lr, 1) }

// StepScaled implements Optimizer.
func (o *Adam) StepScaled(w, g []float32, lr, gscale float32) error {
	if err := stepCheck("Adam", len(o.M), w, g, lr, gscale); err != nil {
		return err
	}
	if len(o.V) != len(o.M) {
		return stepCheck("Adam", len(o.V), w, g, lr, gscale)
	}
	t := float64(o.Steps + 1)
	b1, b2, eps := o.Beta1, o.Beta2, o.Eps
	bc1 := float32(1 - math.Pow(float64(b1), t))
	bc2 := float32(1 - math.Pow(float64(b2), t))
	decay := 1 - lr*o.WeightDecay
	c := adamConsts{b1: b1, c1: 1 - b1, b2: b2, c2: 1 - b2, decay: decay, bc1: bc1, bc2: bc2, lr: lr, eps: eps, gs: gscale}
	if o.WeightDecay == 0 {
		c.decay = 1 // w*1 is w: the vector code always multiplies
	}
	par.Grained(len(w), optGrain, func(lo, hi int) {
		wr, gr, mr, vr := w[lo:hi], g[lo:hi], o.M[lo:hi], o.V[lo:hi]
		k := adamVec(wr, gr, mr, vr, c)
		wr, gr, mr, vr = wr[k:], gr[k:], mr[k:], vr[k:]
		for i, gi := range gr {
			gi = float32(gi * gscale)
			m := b1*mr[i] + (1-b1)*gi
			v := b2*vr[i] + (1-b2)*gi*gi
			mr[i], vr[i] = m, v
			wi := wr[i]
			if o.WeightDecay != 0 {
				wi *= decay
			}
			wr[i] = wi - lr*(m/bc1)/(sqrt32(v/bc2)+eps)
		}
	})
	o.Steps++
	return nil
}

// State implements Optimizer.
func (o *Adam) State() State {
	return State{Steps: o.Steps, Slots: []Slot{{"m", o.M}, {"v", o.V}}}
}

// SetState implements Optimizer.
func (o *Adam) SetState(s State) error { return setState("Adam", &o.Steps, o.State().Slots, s) }
