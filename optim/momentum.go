package optim

import "github.com/anestar/anestar/internal/par"

// Momentum is gradient descent with a velocity (heavy ball):
//
//	v = beta*v + (1-dampening)*g
//	w -= lr*v                 (classical)
//	w -= lr*(g + beta*v)      (Nesterov)
//
// With Dampening 0 this is torch.optim.SGD's momentum; with Dampening equal
// to Beta it is the exponential average the reference library uses.
type Momentum struct {
	Beta      float32   // momentum coefficient, typically 0.9
	Dampening float32   // fraction of the gradient held back, usually 0
	Nesterov  bool      // look-ahead update
	Velocity  []float32 // v, one per parameter
	Steps     int       // updates applied
}

var _ Optimizer = (*Momentum)(nil)

// NewMomentum returns momentum descent for n parameters with a zero velocity.
func NewMomentum(n int, beta float32, nesterov bool) *Momentum {
	return &Momentum{Beta: beta, Nesterov: nesterov, Velocity: make([]float32, n)}
}

// Name implements Optimizer.
func (o *Momentum) Name() string { return "momentum" }

// Step implements Optimizer.
func (o *Momentum) Step(w, g []float32, lr float32) error { return o.StepScaled(w, g, lr, 1) }

// StepScaled implements Optimizer.
func (o *Momentum) StepScaled(w, g []float32, lr, gscale float32) error {
	if err := stepCheck("Momentum", len(o.Velocity), w, g, lr, gscale); err != nil {
		return err
	}
	beta, keep := o.Beta, 1-o.Dampening
	par.Grained(len(w), optGrain, func(lo, hi int) {
		wr, gr, vr := w[lo:hi], g[lo:hi], o.Velocity[lo:hi]
		for i, gi := range gr {
			gi = float32(gi * gscale)
			v := beta*vr[i] + keep*gi
			vr[i] = v
			if o.Nesterov {
				wr[i] -= lr * (gi + beta*v)
			} else {
				wr[i] -= lr * v
			}
		}
	})
	o.Steps++
	return nil
}

// State implements Optimizer.
func (o *Momentum) State() State {
	return State{Steps: o.Steps, Slots: []Slot{{"velocity", o.Velocity}}}
}

// SetState implements Optimizer.
func (o *Momentum) SetState(s State) error {
	return setState("Momentum", &o.Steps, o.State().Slots, s)
}
