package builtins

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/optim"
	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Names in a training-state checkpoint that the builtins fill in (see package ckpt's convention).
const (
	stepCounter  = "step"        // state/step: the next step to run
	optimCounter = "optim_steps" // state/optim_steps: the optimizer's update count
	runRNG       = "run"         // rng/run: the run's generator (tensor.seed)
	gradSlot     = "grad"        // optim/NAME/grad: gradients accumulated in an unfinished optimizer window
)

// ckptSaveState implements ckpt.save_state: the script says what to save, package ckpt lays it out.
func (s *session) ckptSaveState(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var weights *starlark.Dict
	var optV starlark.Value = starlark.None
	var gradsV starlark.Value = starlark.None
	var step int64
	times, meta := starlark.NewDict(0), starlark.NewDict(0)
	var structural starlark.Iterable = starlark.NewList(nil)
	keep := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "weights", &weights, "optim?", &optV,
		"grads?", &gradsV, "step?", &step, "times?", &times, "meta?", &meta, "structural?", &structural, "keep?", &keep); err != nil {
		return nil, err
	}
	st := &ckpt.State{
		Params:   map[string]ckpt.Tensor{},
		Optim:    map[string]map[string]ckpt.Tensor{},
		Counters: map[string]int64{stepCounter: step},
		RNG:      map[string][]byte{},
		Times:    map[string]float64{},
		Meta:     map[string]string{},
	}
	keys, ts, err := tensorDict(b.Name(), "weights", weights)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		ct, err := s.ckptTensor(b.Name(), "weights["+k+"]", ts[i])
		if err != nil {
			return nil, err
		}
		st.Params[k] = ct
	}
	if optV != starlark.None {
		o, ok := optV.(*optimizer)
		if !ok {
			return nil, nameErrf(b.Name(), "optim: got %s, want an optimizer", optV.Type())
		}
		for _, k := range o.names {
			slots := map[string]ckpt.Tensor{}
			for _, sl := range o.opts[k].State().Slots {
				ct, err := ckpt.FromFloat32(ckpt.F32, slices.Clone(o.params[k].shape), sl.Data)
				if err != nil {
					return nil, nameErrf(b.Name(), "optim %s/%s: %w", k, sl.Name, err)
				}
				slots[sl.Name] = ct
			}
			st.Optim[k] = slots
		}
		st.Counters[optimCounter] = int64(o.steps())
	}
	grads, err := optionalDict(b.Name(), "grads", gradsV)
	if err != nil {
		return nil, err
	}
	if grads != nil {
		gkeys, gts, err := tensorDict(b.Name(), "grads", grads)
		if err != nil {
			return nil, err
		}
		for i, k := range gkeys {
			t := gts[i]
			if _, ok := st.Params[k]; !ok {
				return nil, nameErrf(b.Name(), "grads[%q]: no weight of that name", k)
			}
			ct, err := s.ckptTensor(b.Name(), "grads["+k+"]", t)
			if err != nil {
				return nil, err
			}
			if st.Optim[k] == nil {
				st.Optim[k] = map[string]ckpt.Tensor{}
			}
			st.Optim[k][gradSlot] = ct
		}
	}
	raw, err := s.rng.src.MarshalBinary()
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	st.RNG[runRNG] = raw
	tkeys, tvals, err := dictItems(b.Name(), "times", times)
	if err != nil {
		return nil, err
	}
	for i, k := range tkeys {
		f, ok := starlark.AsFloat(tvals[i])
		if !ok {
			return nil, nameErrf(b.Name(), "times[%q]: got %s, want a number of seconds", k, tvals[i].Type())
		}
		st.Times[k] = f
	}
	mkeys, mvals, err := dictItems(b.Name(), "meta", meta)
	if err != nil {
		return nil, err
	}
	for i, k := range mkeys {
		enc, err := starlark.Call(thread, starjson.Module.Members["encode"], starlark.Tuple{mvals[i]}, nil)
		if err != nil {
			return nil, nameErrf(b.Name(), "meta[%q]: %w", k, err)
		}
		st.Meta[k] = string(enc.(starlark.String))
	}
	if st.Config, err = s.paramsJSON(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	st.Structural = []string{}
	it := structural.Iterate()
	defer it.Done()
	var v starlark.Value
	for it.Next(&v) {
		name, ok := starlark.AsString(v)
		if !ok {
			return nil, nameErrf(b.Name(), "structural: got %s, want parameter names", v.Type())
		}
		if s.params == nil || !slices.ContainsFunc(s.params.list, func(p Param) bool { return p.Name == name }) {
			return nil, nameErrf(b.Name(), "structural: %q is not a parameter of the script (params())", name)
		}
		st.Structural = append(st.Structural, name)
	}
	if err := s.check(b.Name()); err != nil {
		return nil, err
	}
	if err := s.prepareSave(path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := ckpt.SaveState(path, st, ckpt.SaveOptions{Keep: keep}); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	s.saved, s.savedStep = path, step
	return starlark.None, nil
}

// ckptTensor converts t to a checkpoint tensor (F32), refusing one that queued work writes.
func (s *session) ckptTensor(fn, what string, t *Tensor) (ckpt.Tensor, error) {
	if err := t.readable(fn); err != nil {
		return ckpt.Tensor{}, err
	}
	ct, err := ckpt.FromFloat32(ckpt.F32, slices.Clone(t.shape), t.data)
	if err != nil {
		return ckpt.Tensor{}, nameErrf(fn, "%s: %w", what, err)
	}
	return ct, nil
}

// paramsJSON returns every declared parameter's value as a JSON object ("" before params()).
func (s *session) paramsJSON() (string, error) {
	if s.params == nil {
		return "", nil
	}
	m := map[string]any{}
	for _, p := range s.params.list {
		if raw, ok := s.taken[p.Name]; ok { // taken from the checkpoint the run resumed: that value is the run's
			m[p.Name] = raw
			continue
		}
		v, err := toJSONValue(p.Value)
		if err != nil {
			return "", fmt.Errorf("parameter %s: %w", p.Name, err)
		}
		m[p.Name] = v
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// compareParams compares the parameters a checkpoint recorded (config, a JSON object) with the run's: a
// structural one that differs is an error (the checkpoint is of another model); the others that differ
// are returned as "name old → new", for a note. Parameters only one side has are passed over.
func (s *session) compareParams(config string, structural []string) ([]string, error) {
	if config == "" || s.params == nil {
		return nil, nil
	}
	cur, err := s.paramsJSON()
	if err != nil {
		return nil, err
	}
	var was, now map[string]json.RawMessage
	if err := json.Unmarshal([]byte(config), &was); err != nil {
		return nil, fmt.Errorf("metadata %q: %w", ckpt.ParamsKey, err)
	}
	if err := json.Unmarshal([]byte(cur), &now); err != nil {
		return nil, err
	}
	var changed []string
	for _, k := range sortedKeys(was) {
		n, ok := now[k]
		if !ok || sameJSON(was[k], n) {
			continue
		}
		if slices.Contains(structural, k) {
			return nil, fmt.Errorf("it was trained with %s = %s, this run has %s = %s: %s fixes the model's shapes and cannot change on resume (--set %s=%s, or start afresh without --resume)",
				k, was[k], k, n, k, k, was[k])
		}
		changed = append(changed, fmt.Sprintf("%s %s → %s", k, was[k], n))
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

// ckptLoadState implements ckpt.load_state: it checks the whole checkpoint against the run's
// weights and optimizer, then restores them, the generator and returns the rest.
func (s *session) ckptLoadState(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var weights *starlark.Dict
	var optV starlark.Value = starlark.None
	var gradsV starlark.Value = starlark.None
	var takenV starlark.Iterable = starlark.NewList(nil)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "weights", &weights, "optim?", &optV, "grads?", &gradsV, "taken?", &takenV); err != nil {
		return nil, err
	}
	var taken []string
	it := takenV.Iterate()
	defer it.Done()
	for var_ := starlark.Value(nil); it.Next(&var_); {
		n, ok := starlark.AsString(var_)
		if !ok {
			return nil, nameErrf(b.Name(), "taken: got %s, want parameter names", var_.Type())
		}
		taken = append(taken, n)
	}
	grads, err := optionalDict(b.Name(), "grads", gradsV)
	if err != nil {
		return nil, err
	}
	fail := func(format string, a ...any) error {
		return nameErrf(b.Name(), "%s: %s", path, fmt.Sprintf(format, a...))
	}
	f, err := ckpt.Load(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if v, ok := f.Metadata[ckpt.FormatKey]; !ok {
		return nil, fail("not a training-state checkpoint (no %q metadata; written by ckpt.save or an older anestar?): start afresh without --resume", ckpt.FormatKey)
	} else if v != ckpt.FormatVersion {
		return nil, fail("format %q, this anestar reads %q", v, ckpt.FormatVersion)
	}
	st, err := ckpt.StateFromFile(f)
	if err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", path, err)
	}
	// The recorded parameters first: a changed size is named as such, not as a tensor of another shape.
	if len(taken) > 0 { // the values the script took are the checkpoint's: recorded as the run's from now on
		var was map[string]json.RawMessage
		if err := json.Unmarshal([]byte(st.Config), &was); err == nil {
			if s.taken == nil {
				s.taken = map[string]json.RawMessage{}
			}
			for _, n := range taken {
				if v, ok := was[n]; ok {
					s.taken[n] = v
				}
			}
		}
	}
	changed, err := s.compareParams(st.Config, st.Structural)
	if err != nil {
		return nil, fail("%v", err)
	}
	step, ok := st.Counters[stepCounter]
	if !ok {
		return nil, fail("no tensor %s%s (the next step to run)", ckpt.CounterPrefix, stepCounter)
	}
	raw, ok := st.RNG[runRNG]
	if !ok {
		return nil, fail("no tensor %s%s (the random generator's state)", ckpt.RNGPrefix, runRNG)
	}
	// Check everything before changing anything: a failed resume leaves the run as it was.
	keys, ts, err := tensorDict(b.Name(), "weights", weights)
	if err != nil {
		return nil, err
	}
	type restore struct {
		dst  *Tensor
		data []float32
	}
	var todo []restore
	take := func(name string, ct ckpt.Tensor, dst *Tensor, what string) error {
		if !slices.Equal(ct.Shape, dst.shape) && !(len(ct.Shape) == 0 && len(dst.data) == 1) {
			return fail("tensor %s is %v%v, the run's %s is %s: the checkpoint is of another model (check the sizes)", name, ct.DType, ct.Shape, what, shapeString(dst.shape))
		}
		data, err := ct.Float32()
		if err != nil {
			return fail("tensor %s: %v", name, err)
		}
		for i, v := range data { // a NaN weight or moment computes nothing: every step would be skipped
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fail("tensor %s holds %v at element %d: a checkpoint with non-finite values cannot train on", name, v, i)
			}
		}
		if err := dst.writable(b.Name()); err != nil {
			return err
		}
		todo = append(todo, restore{dst, data})
		return nil
	}
	for i, k := range keys {
		t := ts[i]
		ct, ok := st.Params[k]
		if !ok {
			return nil, fail("no tensor %s%s for the run's weight %q (it holds %s)", ckpt.ParamPrefix, k, k, names(st.Params, ckpt.ParamPrefix))
		}
		if err := take(ckpt.ParamPrefix+k, ct, t, "weight "+k); err != nil {
			return nil, err
		}
	}
	for k := range st.Params {
		if _, found, _ := weights.Get(starlark.String(k)); !found {
			return nil, fail("tensor %s%s is not among the run's weights (%s): the checkpoint is of another model", ckpt.ParamPrefix, k, strings.Join(keys, ", "))
		}
	}
	var opt *optimizer
	news := map[string]optim.State{}
	if optV != starlark.None {
		if opt, ok = optV.(*optimizer); !ok {
			return nil, nameErrf(b.Name(), "optim: got %s, want an optimizer", optV.Type())
		}
		steps, ok := st.Counters[optimCounter]
		if !ok {
			return nil, fail("no tensor %s%s (the optimizer's update count)", ckpt.CounterPrefix, optimCounter)
		}
		for _, k := range opt.names {
			ns := optim.State{Steps: int(steps)}
			for _, sl := range opt.opts[k].State().Slots {
				name := ckpt.OptimPrefix + k + "/" + sl.Name
				ct, ok := st.Optim[k][sl.Name]
				if !ok {
					return nil, fail("no tensor %s: the run's %s optimizer keeps %s for %s", name, opt.kind, sl.Name, k)
				}
				if !slices.Equal(ct.Shape, opt.params[k].shape) {
					return nil, fail("tensor %s is %v, the run's weight %s is %s", name, ct.Shape, k, shapeString(opt.params[k].shape))
				}
				data, err := ct.Float32()
				if err != nil {
					return nil, fail("tensor %s: %v", name, err)
				}
				ns.Slots = append(ns.Slots, optim.Slot{Name: sl.Name, Data: data})
			}
			news[k] = ns
		}
	}
	// Gradients of an unfinished window: restored when saved, else zeroed.
	restoredGrads := false
	if grads != nil {
		gkeys, gts, err := tensorDict(b.Name(), "grads", grads)
		if err != nil {
			return nil, err
		}
		for i, k := range gkeys {
			t := gts[i]
			name := ckpt.OptimPrefix + k + "/" + gradSlot
			ct, ok := st.Optim[k][gradSlot]
			if !ok {
				if err := t.writable(b.Name()); err != nil {
					return nil, err
				}
				todo = append(todo, restore{t, make([]float32, len(t.data))})
				continue
			}
			restoredGrads = true
			if err := take(name, ct, t, "gradient "+k); err != nil {
				return nil, err
			}
		}
	}
	// Decode the metadata before restoring, too.
	meta := starlark.NewDict(len(st.Meta))
	for _, k := range sortedKeys(st.Meta) {
		v, err := decodeJSON(thread, st.Meta[k])
		if err != nil {
			return nil, fail("metadata %q: %v", k, err)
		}
		meta.SetKey(starlark.String(k), v)
	}
	params := starlark.Value(starlark.NewDict(0))
	if st.Config != "" {
		if params, err = decodeJSON(thread, st.Config); err != nil {
			return nil, fail("metadata %q: %v", ckpt.ParamsKey, err)
		}
	}
	saved := newRNG(0)
	if err := saved.src.UnmarshalBinary(raw); err != nil {
		return nil, fail("tensor %s%s: not a random generator state", ckpt.RNGPrefix, runRNG)
	}

	for _, r := range todo {
		copy(r.dst.data, r.data)
	}
	if opt != nil {
		for _, k := range opt.names {
			if err := opt.opts[k].SetState(news[k]); err != nil {
				return nil, fail("optimizer state of %s: %v", k, err)
			}
		}
	}
	s.rng.src.UnmarshalBinary(raw)
	s.resumedStep = step
	if s.saved == "" {
		s.saved, s.savedStep = path, step // what an interruption before the next save leaves
	}

	if len(changed) > 0 && thread.Print != nil {
		thread.Print(thread, fmt.Sprintf("resume: parameters changed since %s was saved: %s", path, strings.Join(changed, ", ")))
	}

	times := starlark.NewDict(len(st.Times))
	for _, k := range sortedKeys(st.Times) {
		times.SetKey(starlark.String(k), starlark.Float(st.Times[k]))
	}
	structural := make([]starlark.Value, len(st.Structural))
	for i, n := range st.Structural {
		structural[i] = starlark.String(n)
	}
	return starlarkstruct.FromStringDict(starlark.String("state"), starlark.StringDict{
		"path":       starlark.String(path),
		"step":       starlark.MakeInt64(step),
		"times":      times,
		"params":     params,
		"structural": starlark.NewList(structural),
		"meta":       meta,
		"grads":      starlark.Bool(restoredGrads),
	}), nil
}

// names lists the names of m with prefix, sorted, for messages.
func names(m map[string]ckpt.Tensor, prefix string) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range sortedKeys(m) {
		out = append(out, prefix+k)
	}
	return strings.Join(out, ", ")
}

// optionalDict returns v as a dict, or nil for None.
func optionalDict(fn, what string, v starlark.Value) (*starlark.Dict, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case *starlark.Dict:
		return v, nil
	}
	return nil, nameErrf(fn, "%s: got %s, want a dict or None", what, v.Type())
}
