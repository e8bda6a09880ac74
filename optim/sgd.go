package optim

import "github.com/anestar/anestar/internal/par"

// SGD is plain gradient descent: w -= lr*g. It has no state but the step
// count.
type SGD struct {
	N     int // parameter elements
	Steps int // updates applied
}

var _ Optimizer = (*SGD)(nil)

// NewSGD returns plain gradient descent for n parameters.
func NewSGD(n int) *SGD { return &SGD{N: n} }

// Name implements Optimizer.
func (o *SGD) Name() string { return "sgd" }

// Step implements Optimizer.
func (o *SGD) Step(w, g []float32, lr float32) error { return o.StepScaled(w, g, lr, 1) }

// StepScaled implements Optimizer.
func (o *SGD) StepScaled(w, g []float32, lr, gscale float32) error {
	if err := stepCheck("SGD", o.N, w, g, lr, gscale); err != nil {
		return err
	}
	par.Grained(len(w), optGrain, func(lo, hi int) {
		wr, gr := w[lo:hi], g[lo:hi]
		for i := range wr {
			wr[i] -= lr * float32(gr[i]*gscale)
		}
	})
	o.Steps++
	return nil
}

// State implements Optimizer.
func (o *SGD) State() State { return State{Steps: o.Steps} }

// SetState implements Optimizer.
func (o *SGD) SetState(s State) error { return setState("SGD", &o.Steps, nil, s) }
