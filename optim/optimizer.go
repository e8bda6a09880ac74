package optim

import (
	"fmt"
	"math"
	"strings"
)

// Optimizer updates one parameter tensor from its gradient. Each
// optimizer holds the per-element state of one tensor (sized when it is
// made) and the number of steps taken; State and SetState expose both so
// that a checkpoint can save and restore them exactly.
type Optimizer interface {
	// Name is the optimizer's name: sgd, momentum, adagrad, rmsprop, adam or adamw.
	Name() string
	// Step applies one update with learning rate lr: w -= lr * update(g).
	// w and g must have the length the optimizer was made for.
	Step(w, g []float32, lr float32) error
	// StepScaled is Step from the gradient g*gscale, each element's
	// product rounded to float32 as it is read (the bits of multiplying g
	// first, as an unscale and clip would, in one pass less; g is left as
	// it is). StepScaled(w, g, lr, 1) is Step(w, g, lr).
	StepScaled(w, g []float32, lr, gscale float32) error
	// State returns the step count and the live state buffers.
	State() State
	// SetState restores a saved state; slot names and lengths must match.
	SetState(s State) error
}

// State is what a checkpoint saves of an optimizer.
type State struct {
	Steps int    // updates applied so far (Adam's t)
	Slots []Slot // per-element buffers, e.g. Adam's m and v
}

// Slot is one named per-element state buffer of an optimizer.
type Slot struct {
	Name string    // "m", "v", "velocity", "sum" or "mean_square"
	Data []float32 // one value per parameter element
}

// stepCheck validates the slices of a Step call against the optimizer's size.
func stepCheck(name string, n int, w, g []float32, lr, gscale float32) error {
	if len(w) != n || len(g) != n {
		return fmt.Errorf("optim.%s.Step: w has %d and g %d elements, optimizer made for %d", name, len(w), len(g), n)
	}
	if lr != lr {
		return fmt.Errorf("optim.%s.Step: learning rate is NaN", name)
	}
	if gscale != gscale || math.IsInf(float64(gscale), 0) {
		return fmt.Errorf("optim.%s.Step: gradient scale %g, want a finite number", name, gscale)
	}
	return nil
}

// setState copies saved into the optimizer's live state after checking
// that slot names and lengths match.
func setState(name string, steps *int, live []Slot, saved State) error {
	if saved.Steps < 0 {
		return fmt.Errorf("optim.%s.SetState: negative step count %d", name, saved.Steps)
	}
	if len(saved.Slots) != len(live) {
		return fmt.Errorf("optim.%s.SetState: %d slots, want %d (%s)", name, len(saved.Slots), len(live), slotNames(live))
	}
	for i, s := range saved.Slots {
		if s.Name != live[i].Name || len(s.Data) != len(live[i].Data) {
			return fmt.Errorf("optim.%s.SetState: slot %d is %q with %d elements, want %q with %d",
				name, i, s.Name, len(s.Data), live[i].Name, len(live[i].Data))
		}
	}
	for i, s := range saved.Slots {
		copy(live[i].Data, s.Data)
	}
	*steps = saved.Steps
	return nil
}

func slotNames(s []Slot) string {
	names := make([]string, len(s))
	for i, sl := range s {
		names[i] = sl.Name
	}
	return strings.Join(names, ", ")
}

// optGrain is the number of elements below which an update stays on one
// goroutine.
const optGrain = 1 << 15
