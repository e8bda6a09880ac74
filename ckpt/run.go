package ckpt

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Names of the training-state convention that a Run fills in (see the package documentation).
const (
	StepCounter  = "step"        // state/step: the next step to run
	OptimCounter = "optim_steps" // state/optim_steps: the optimizer's update count
	RunRNG       = "run"         // rng/run: the run's random generator
	GradSlot     = "grad"        // optim/NAME/grad: the gradients accumulated in an unfinished optimizer window
)

// A Run is a training run's side of a State: the tensors it trains, its optimizer, the gradients of
// an unfinished optimizer window, its random generator and its parameters. CaptureState makes a
// State of it; State.Match checks a State against it and returns the Restore that puts it back.
type Run struct {
	Weights []Var  // the weights by name (param/NAME), in the run's order
	Optim   *Optim // the optimizer, nil for none
	// Grads are the gradient accumulators by weight name (optim/NAME/grad); nil for none. On
	// restore, one the state does not hold is zeroed.
	Grads  []Var
	RNG    []byte // the run's random generator's state (rng/run); not read by Match
	Params string // the run's parameters as a JSON object ("" for none): saved, and compared on restore
	// Taken names parameters the run took from the checkpoint instead of its own: Match does not
	// compare them and returns their recorded values in Restore.Taken.
	Taken []string
}

// A Var is one float32 tensor of a run: a weight or a gradient.
type Var struct {
	Name  string    // the weight's name
	Shape []int     // its shape
	Data  []float32 // its elements, row-major: what CaptureState saves, and what Restore.Apply overwrites
}

// An Optim is what a run's optimizer keeps: an update count and, for each weight, its slots.
type Optim struct {
	Kind   string       // the optimizer's kind ("adam", "adamw"), for messages
	Steps  int64        // the update count (state/optim_steps)
	Params []OptimParam // by weight, in the optimizer's order
}

// An OptimParam is the optimizer's state for one weight.
type OptimParam struct {
	Name  string // the weight's name
	Shape []int  // the weight's shape, which each slot has
	Slots []Slot // the slots (Adam's m and v) in the optimizer's order
}

// A Slot is one named vector an optimizer keeps for a weight.
type Slot struct {
	Name string    // the slot's name (optim/WEIGHT/NAME), without '/'
	Data []float32 // its elements, as many as the weight's
}

// CaptureState returns the State of r at step, the next step to run: its weights as param/NAME,
// the optimizer's slots as optim/NAME/SLOT and its update count, the gradients as optim/NAME/grad
// (each of a weight of r), the generator as rng/run and the parameters. Every tensor is copied
// (stored F32); the caller adds the times, the metadata and the structural names.
func CaptureState(r Run, step int64) (*State, error) {
	st := &State{
		Params:   map[string]Tensor{},
		Optim:    map[string]map[string]Tensor{},
		Counters: map[string]int64{StepCounter: step},
		RNG:      map[string][]byte{},
		Times:    map[string]float64{},
		Config:   r.Params,
		Meta:     map[string]string{},
	}
	for _, w := range r.Weights {
		t, err := FromFloat32(F32, slices.Clone(w.Shape), w.Data)
		if err != nil {
			return nil, fmt.Errorf("weights[%s]: %w", w.Name, err)
		}
		st.Params[w.Name] = t
	}
	if r.Optim != nil {
		for _, p := range r.Optim.Params {
			slots := map[string]Tensor{}
			for _, sl := range p.Slots {
				t, err := FromFloat32(F32, slices.Clone(p.Shape), sl.Data)
				if err != nil {
					return nil, fmt.Errorf("optim %s/%s: %w", p.Name, sl.Name, err)
				}
				slots[sl.Name] = t
			}
			st.Optim[p.Name] = slots
		}
		st.Counters[OptimCounter] = r.Optim.Steps
	}
	for _, g := range r.Grads {
		if _, ok := st.Params[g.Name]; !ok {
			return nil, fmt.Errorf("grads[%q]: no weight of that name", g.Name)
		}
		t, err := FromFloat32(F32, slices.Clone(g.Shape), g.Data)
		if err != nil {
			return nil, fmt.Errorf("grads[%s]: %w", g.Name, err)
		}
		if st.Optim[g.Name] == nil {
			st.Optim[g.Name] = map[string]Tensor{}
		}
		st.Optim[g.Name][GradSlot] = t
	}
	st.RNG[RunRNG] = slices.Clone(r.RNG)
	return st, nil
}

// A Restore is a State checked against a Run, every tensor decoded: what a resume puts back.
// Match makes it without changing the run; Apply writes the weights and gradients, and the caller
// hands Optim and RNG to the optimizer and the generator.
type Restore struct {
	Step    int64    // state/step: the next step to run
	RNG     []byte   // rng/run: the generator's state, byte for byte
	Changed []string // the recorded parameters that differ from the run's, "name old → new", for a note
	// Taken holds the recorded values of the run's Taken parameters (those the checkpoint has).
	Taken map[string]json.RawMessage
	// Optim is the optimizer's state in the order of the run's Optim.Params, each slot's Data
	// decoded from the checkpoint; nil when the run has no optimizer.
	Optim *Optim
	Grads bool // whether the state held gradients (restored); else the run's are zeroed

	writes []write // the weights and gradients, checked and decoded
}

// A write is one tensor of a Run and the data Apply puts into it.
type write struct {
	dst  []float32
	data []float32
}

// Apply writes the restored weights and gradients into the run's Vars (and zeroes the gradients
// the state did not hold).
func (r *Restore) Apply() {
	for _, w := range r.writes {
		copy(w.dst, w.data)
	}
}

// Match checks the whole of s against run before anything is changed: the recorded parameters
// (a structural one that differs is an error), the step and the generator's state, every weight
// of the run by name and shape with finite values and no other weight in s, the optimizer's slots
// and count, and the gradients. Every error says which tensor and what was expected; one from a
// checkpoint of another model says so.
func (s *State) Match(run Run) (*Restore, error) {
	res := &Restore{}
	if len(run.Taken) > 0 { // their values are the checkpoint's: recorded as the run's from now on
		var was map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s.Config), &was); err == nil {
			res.Taken = map[string]json.RawMessage{}
			for _, n := range run.Taken {
				if v, ok := was[n]; ok {
					res.Taken[n] = v
				}
			}
		}
	}
	// The recorded parameters first: a changed size is named as such, not as a tensor of another shape.
	changed, err := CompareParams(s.Config, run.Params, s.Structural, run.Taken)
	if err != nil {
		return nil, err
	}
	res.Changed = changed
	step, ok := s.Counters[StepCounter]
	if !ok {
		return nil, fmt.Errorf("no tensor %s%s (the next step to run)", CounterPrefix, StepCounter)
	}
	res.Step = step
	raw, ok := s.RNG[RunRNG]
	if !ok {
		return nil, fmt.Errorf("no tensor %s%s (the random generator's state)", RNGPrefix, RunRNG)
	}
	res.RNG = raw
	take := func(name string, t Tensor, dst Var, what string) error {
		if !slices.Equal(t.Shape, dst.Shape) && !(len(t.Shape) == 0 && len(dst.Data) == 1) {
			return fmt.Errorf("tensor %s is %v%v, the run's %s is %s: the checkpoint is of another model (check the sizes)", name, t.DType, t.Shape, what, shapeString(dst.Shape))
		}
		data, err := t.Float32()
		if err != nil {
			return fmt.Errorf("tensor %s: %w", name, err)
		}
		for i, v := range data { // a NaN weight or moment computes nothing: every step would be skipped
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %s holds %v at element %d: a checkpoint with non-finite values cannot train on", name, v, i)
			}
		}
		res.writes = append(res.writes, write{dst.Data, data})
		return nil
	}
	weights := make([]string, len(run.Weights))
	for i, w := range run.Weights {
		weights[i] = w.Name
		t, ok := s.Params[w.Name]
		if !ok {
			return nil, fmt.Errorf("no tensor %s%s for the run's weight %q (it holds %s)", ParamPrefix, w.Name, w.Name, prefixed(s.Params, ParamPrefix))
		}
		if err := take(ParamPrefix+w.Name, t, w, "weight "+w.Name); err != nil {
			return nil, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Params)) {
		if !slices.Contains(weights, k) {
			return nil, fmt.Errorf("tensor %s%s is not among the run's weights (%s): the checkpoint is of another model", ParamPrefix, k, strings.Join(weights, ", "))
		}
	}
	if o := run.Optim; o != nil {
		steps, ok := s.Counters[OptimCounter]
		if !ok {
			return nil, fmt.Errorf("no tensor %s%s (the optimizer's update count)", CounterPrefix, OptimCounter)
		}
		res.Optim = &Optim{Kind: o.Kind, Steps: steps}
		for _, p := range o.Params {
			np := OptimParam{Name: p.Name, Shape: p.Shape}
			for _, sl := range p.Slots {
				name := OptimPrefix + p.Name + "/" + sl.Name
				t, ok := s.Optim[p.Name][sl.Name]
				if !ok {
					return nil, fmt.Errorf("no tensor %s: the run's %s optimizer keeps %s for %s", name, o.Kind, sl.Name, p.Name)
				}
				if !slices.Equal(t.Shape, p.Shape) {
					return nil, fmt.Errorf("tensor %s is %v, the run's weight %s is %s", name, t.Shape, p.Name, shapeString(p.Shape))
				}
				data, err := t.Float32()
				if err != nil {
					return nil, fmt.Errorf("tensor %s: %w", name, err)
				}
				np.Slots = append(np.Slots, Slot{Name: sl.Name, Data: data})
			}
			res.Optim.Params = append(res.Optim.Params, np)
		}
	}
	// Gradients of an unfinished window: restored when saved, else zeroed.
	for _, g := range run.Grads {
		t, ok := s.Optim[g.Name][GradSlot]
		if !ok {
			res.writes = append(res.writes, write{g.Data, make([]float32, len(g.Data))})
			continue
		}
		res.Grads = true
		if err := take(OptimPrefix+g.Name+"/"+GradSlot, t, g, "gradient "+g.Name); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// CompareParams compares the parameters a checkpoint recorded (was, a JSON object) with a run's
// (now): a structural one that differs is an error (the checkpoint is of another model); the others
// that differ are returned as "name old → new", for a note. Parameters only one side has, and the
// taken ones, are passed over; so is everything when either side is "".
func CompareParams(was, now string, structural, taken []string) ([]string, error) {
	if was == "" || now == "" {
		return nil, nil
	}
	var w, n map[string]json.RawMessage
	if err := json.Unmarshal([]byte(was), &w); err != nil {
		return nil, fmt.Errorf("metadata %q: %w", ParamsKey, err)
	}
	if err := json.Unmarshal([]byte(now), &n); err != nil {
		return nil, fmt.Errorf("the run's parameters: %w", err)
	}
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		v, ok := n[k]
		if !ok || slices.Contains(taken, k) || sameJSON(w[k], v) {
			continue
		}
		if slices.Contains(structural, k) {
			return nil, fmt.Errorf("it was trained with %s = %s, this run has %s = %s: %s fixes the model's shapes and cannot change on resume (--set %s=%s, or start afresh without --resume)",
				k, w[k], k, v, k, k, w[k])
		}
		changed = append(changed, fmt.Sprintf("%s %s → %s", k, w[k], v))
	}
	return changed, nil
}

// sameJSON reports whether two JSON values are equal (numbers by value, so 1 and 1.0 match).
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// prefixed lists the names of m with prefix, sorted, for messages ("none" for none).
func prefixed(m map[string]Tensor, prefix string) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, prefix+k)
	}
	return strings.Join(out, ", ")
}

// shapeString formats a run's shape as the scripts write it, "[2, 4]".
func shapeString(shape []int) string { return strings.ReplaceAll(fmt.Sprint(shape), " ", ", ") }

// ReadState loads the training state at path for a resume: a checkpoint that is not one (no
// format metadata, as ckpt.save writes) or of another format version is an error saying so.
func ReadState(path string) (*State, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	if v, ok := f.Metadata[FormatKey]; !ok {
		return nil, fmt.Errorf("%s: not a training-state checkpoint (no %q metadata; written by ckpt.save or an older anestar?): start afresh without --resume", path, FormatKey)
	} else if v != FormatVersion {
		return nil, fmt.Errorf("%s: format %q, this anestar reads %q", path, v, FormatVersion)
	}
	st, err := StateFromFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}
