package ckpt

import (
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testRun is a run of two weights, Adam over them, gradients of an unfinished window and parameters.
func testRun() Run {
	return Run{
		Weights: []Var{
			{Name: "w1", Shape: []int{4, 2}, Data: []float32{1, 2, 3, 4, 5, 6, 7, 8}},
			{Name: "b", Shape: []int{4}, Data: []float32{-1, -2, -3, -4}},
		},
		Optim: &Optim{Kind: "adam", Steps: 3, Params: []OptimParam{
			{Name: "b", Shape: []int{4}, Slots: []Slot{{"m", []float32{0.1, 0.2, 0.3, 0.4}}, {"v", []float32{1, 2, 3, 4}}}},
			{Name: "w1", Shape: []int{4, 2}, Slots: []Slot{{"m", make([]float32, 8)}, {"v", []float32{8, 7, 6, 5, 4, 3, 2, 1}}}},
		}},
		Grads:  []Var{{Name: "w1", Shape: []int{4, 2}, Data: []float32{0.25, 0.25, 0, 0, 0, 0, 0, 0.5}}},
		RNG:    []byte{1, 2, 3, 4},
		Params: `{"dim":4,"lr":0.5}`,
	}
}

// blank returns a run of r's shapes with every tensor zeroed, as a resumed run starts.
func blank(r Run) Run {
	zero := func(vs []Var) []Var {
		out := make([]Var, len(vs))
		for i, v := range vs {
			out[i] = Var{Name: v.Name, Shape: v.Shape, Data: make([]float32, len(v.Data))}
		}
		return out
	}
	b := r
	b.Weights, b.Grads, b.RNG = zero(r.Weights), zero(r.Grads), nil
	if r.Optim != nil {
		o := *r.Optim
		o.Steps, o.Params = 0, nil
		for _, p := range r.Optim.Params {
			np := OptimParam{Name: p.Name, Shape: p.Shape}
			for _, sl := range p.Slots {
				np.Slots = append(np.Slots, Slot{Name: sl.Name, Data: make([]float32, len(sl.Data))})
			}
			o.Params = append(o.Params, np)
		}
		b.Optim = &o
	}
	return b
}

// A state captured from a run, saved, read back and matched against a blank run of the same
// shapes restores every weight, slot, gradient, counter and the generator exactly.
func TestCaptureMatchRoundTrip(t *testing.T) {
	r := testRun()
	st, err := CaptureState(r, 12)
	if err != nil {
		t.Fatal(err)
	}
	st.Structural = []string{"dim"}
	path := filepath.Join(t.TempDir(), "state.safetensors")
	if err := SaveState(path, st, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"param/w1", "param/b", "optim/w1/m", "optim/b/v", "optim/w1/grad", "state/step", "state/optim_steps", "rng/run"} {
		if _, ok := f.Tensors[name]; !ok {
			t.Errorf("tensor %q missing; have %v", name, keys(f.Tensors))
		}
	}
	got, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	into := blank(r)
	res, err := got.Match(into)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range into.Weights {
		for _, v := range w.Data {
			if v != 0 {
				t.Fatalf("Match changed weight %s before Apply: %v", w.Name, w.Data)
			}
		}
	}
	res.Apply()
	if !reflect.DeepEqual(into.Weights, r.Weights) || !reflect.DeepEqual(into.Grads, r.Grads) {
		t.Errorf("restored weights %v grads %v, want %v %v", into.Weights, into.Grads, r.Weights, r.Grads)
	}
	if res.Step != 12 || string(res.RNG) != string(r.RNG) || !res.Grads || len(res.Changed) != 0 {
		t.Errorf("restore: step %d rng %v grads %v changed %q", res.Step, res.RNG, res.Grads, res.Changed)
	}
	if !reflect.DeepEqual(res.Optim, r.Optim) {
		t.Errorf("restored optimizer %+v, want %+v", res.Optim, r.Optim)
	}
}

// Each mismatch between a state and a run is an error naming the tensor and what was expected,
// and a run is never changed by a failed Match (it writes nothing before Apply).
func TestMatchErrors(t *testing.T) {
	r := testRun()
	st, err := CaptureState(r, 12)
	if err != nil {
		t.Fatal(err)
	}
	st.Structural = []string{"dim"}
	for _, tc := range []struct {
		name string
		edit func(*Run, *State)
		want string
	}{
		{"another shape", func(r *Run, _ *State) { r.Weights[0].Shape = []int{2, 4} },
			"tensor param/w1 is F32[4 2], the run's weight w1 is [2, 4]: the checkpoint is of another model (check the sizes)"},
		{"missing weight", func(r *Run, _ *State) {
			r.Weights = append(r.Weights, Var{Name: "c", Shape: []int{1}, Data: []float32{0}})
		},
			`no tensor param/c for the run's weight "c" (it holds param/b, param/w1)`},
		{"extra weight", func(r *Run, _ *State) { r.Weights = r.Weights[:1] },
			"tensor param/b is not among the run's weights (w1): the checkpoint is of another model"},
		{"structural", func(r *Run, _ *State) { r.Params = `{"dim":8,"lr":0.5}` },
			"it was trained with dim = 4, this run has dim = 8: dim fixes the model's shapes and cannot change on resume (--set dim=4, or start afresh without --resume)"},
		{"no step", func(_ *Run, s *State) { delete(s.Counters, StepCounter) }, "no tensor state/step (the next step to run)"},
		{"no generator", func(_ *Run, s *State) { delete(s.RNG, RunRNG) }, "no tensor rng/run (the random generator's state)"},
		{"no optimizer count", func(_ *Run, s *State) { delete(s.Counters, OptimCounter) }, "no tensor state/optim_steps (the optimizer's update count)"},
		{"no slot", func(_ *Run, s *State) { delete(s.Optim["b"], "v") }, "no tensor optim/b/v: the run's adam optimizer keeps v for b"},
		{"slot shape", func(r *Run, _ *State) { r.Optim.Params[0].Shape = []int{2, 2} }, "tensor optim/b/m is [4], the run's weight b is [2, 2]"},
		{"non-finite", func(_ *Run, s *State) {
			s.Params["b"], _ = FromFloat32(F32, []int{4}, []float32{0, float32(math.NaN()), 0, 0})
		}, "tensor param/b holds NaN at element 1: a checkpoint with non-finite values cannot train on"},
		{"gradient shape", func(r *Run, _ *State) { r.Grads[0].Shape = []int{8} },
			"tensor optim/w1/grad is F32[4 2], the run's gradient w1 is [8]: the checkpoint is of another model"},
		{"bad params", func(_ *Run, s *State) { s.Config = "{" }, `metadata "params": unexpected end of JSON input`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *st
			s.Counters = map[string]int64{StepCounter: 12, OptimCounter: 3}
			s.RNG = map[string][]byte{RunRNG: r.RNG}
			s.Params = map[string]Tensor{"w1": st.Params["w1"], "b": st.Params["b"]}
			s.Optim = map[string]map[string]Tensor{"w1": st.Optim["w1"], "b": {"m": st.Optim["b"]["m"], "v": st.Optim["b"]["v"]}}
			into := blank(testRun())
			tc.edit(&into, &s)
			res, err := s.Match(into)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Match = %v, %v; want an error containing %q", res, err, tc.want)
			}
		})
	}
}

// Parameters that changed and are not structural are returned for a note; taken ones are not
// compared, and their recorded values come back.
func TestMatchParams(t *testing.T) {
	r := testRun()
	st, err := CaptureState(r, 1)
	if err != nil {
		t.Fatal(err)
	}
	st.Structural = []string{"dim"}
	into := blank(r)
	into.Params = `{"dim":4,"lr":0.25,"new":1}`
	res, err := st.Match(into)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"lr 0.5 → 0.25"}; !reflect.DeepEqual(res.Changed, want) {
		t.Errorf("changed %q, want %q", res.Changed, want)
	}
	into.Params = `{"dim":8,"lr":0.25}`
	into.Taken = []string{"dim", "absent"}
	if res, err = st.Match(into); err != nil {
		t.Fatal(err)
	}
	if want := map[string]json.RawMessage{"dim": json.RawMessage("4")}; !reflect.DeepEqual(res.Taken, want) {
		t.Errorf("taken %q, want %q", res.Taken, want)
	}
	if changed, err := CompareParams(`{"lr":1}`, `{"lr":1.0}`, nil, nil); err != nil || len(changed) != 0 {
		t.Errorf("1 and 1.0: changed %q, %v; want the same value", changed, err)
	}
}

// Gradients the state does not hold are zeroed; a scalar tensor fills a one-element weight.
func TestMatchZeroesGradsAndTakesScalars(t *testing.T) {
	r := testRun()
	r.Grads = nil
	st, err := CaptureState(r, 5)
	if err != nil {
		t.Fatal(err)
	}
	st.Params["s"], _ = FromFloat32(F32, []int{}, []float32{2.5})
	into := blank(testRun())
	into.Grads[0].Data[0] = 9
	into.Weights = append(into.Weights, Var{Name: "s", Shape: []int{1}, Data: []float32{0}})
	res, err := st.Match(into)
	if err != nil {
		t.Fatal(err)
	}
	res.Apply()
	if res.Grads || into.Grads[0].Data[0] != 0 || into.Weights[2].Data[0] != 2.5 {
		t.Errorf("grads restored %v, grad %v, scalar %v", res.Grads, into.Grads[0].Data, into.Weights[2].Data)
	}
}

func TestCaptureErrors(t *testing.T) {
	r := testRun()
	r.Grads = append(r.Grads, Var{Name: "x", Shape: []int{1}, Data: []float32{1}})
	if _, err := CaptureState(r, 1); err == nil || !strings.Contains(err.Error(), `grads["x"]: no weight of that name`) {
		t.Errorf("a gradient of no weight: %v", err)
	}
	r = testRun()
	r.Weights[0].Shape = []int{3}
	if _, err := CaptureState(r, 1); err == nil || !strings.Contains(err.Error(), "weights[w1]: ") {
		t.Errorf("a weight of the wrong size: %v", err)
	}
}

// ReadState refuses a checkpoint that is not a training state, or of another format, saying so.
func TestReadStateFormat(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.safetensors")
	w, _ := FromFloat32(F32, []int{2}, []float32{1, 2})
	if err := Save(plain, &File{Tensors: map[string]Tensor{"w": w}}, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(plain); err == nil || !strings.Contains(err.Error(), plain+`: not a training-state checkpoint (no "format" metadata`) {
		t.Errorf("a plain checkpoint: %v", err)
	}
	other := filepath.Join(dir, "other.safetensors")
	if err := Save(other, &File{Tensors: map[string]Tensor{"w": w}, Metadata: map[string]string{FormatKey: "anestar-train/0"}}, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(other); err == nil || !strings.Contains(err.Error(), `format "anestar-train/0", this anestar reads "anestar-train/1"`) {
		t.Errorf("another format: %v", err)
	}
}
