package optim

import "github.com/anestar/anestar/internal/par"

// RMSProp scales each element's step by a moving average of squared
// gradients:
//
//	v = rho*v + (1-rho)*g^2
//	w -= lr * g / (sqrt(v) + eps)
//
// as torch.optim.RMSprop (alpha = rho, not centered, no momentum) and the
// reference library (rho 0.9) do.
type RMSProp struct {
	Rho        float32   // decay of the average, e.g. 0.9 or 0.99
	Eps        float32   // added to the root, e.g. 1e-8
	MeanSquare []float32 // v
	Steps      int       // updates applied
}

var _ Optimizer = (*RMSProp)(nil)

// NewRMSProp returns RMSProp for n parameters.
func NewRMSProp(n int, rho, eps float32) *RMSProp {
	return &RMSProp{Rho: rho, Eps: eps, MeanSquare: make([]float32, n)}
}

// Name implements Optimizer.
func (o *RMSProp) Name() string { return "rmsprop" }

// Step implements Optimizer.
func (o *RMSProp) Step(w, g []float32, lr float32) error { return o.StepScaled(w, g, lr, 1) }

// StepScaled implements Optimizer.
func (o *RMSProp) StepScaled(w, g []float32, lr, gscale float32) error {
	if err := stepCheck("RMSProp", len(o.MeanSquare), w, g, lr, gscale); err != nil {
		return err
	}
	rho := o.Rho
	par.Grained(len(w), optGrain, func(lo, hi int) {
		wr, gr, vr := w[lo:hi], g[lo:hi], o.MeanSquare[lo:hi]
		for i, gi := range gr {
			gi = float32(gi * gscale)
			v := rho*vr[i] + (1-rho)*gi*gi
			vr[i] = v
			wr[i] -= lr * gi / (sqrt32(v) + o.Eps)
		}
	})
	o.Steps++
	return nil
}

// State implements Optimizer.
func (o *RMSProp) State() State {
	return State{Steps: o.Steps, Slots: []Slot{{"mean_square", o.MeanSquare}}}
}

// SetState implements Optimizer.
func (o *RMSProp) SetState(s State) error { return setState("RMSProp", &o.Steps, o.State().Slots, s) }
