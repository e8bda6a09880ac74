package builtins

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/optim"
	starjson "go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
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
	run, _, err := ckptRun(b.Name(), weights, optV, gradsV)
	if err != nil {
		return nil, err
	}
	if run.RNG, err = s.rng.src.MarshalBinary(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if run.Params, err = s.paramsJSON(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	st, err := ckpt.CaptureState(run, step)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
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

// ckptRun converts save_state's and load_state's weights, optim and grads to the ckpt.Run they
// describe (its Vars the tensors' own memory, each tensor readable) and returns the tensors with
// it: the weights, then the gradients, in the order of run.Weights and run.Grads.
func ckptRun(fn string, weights *starlark.Dict, optV, gradsV starlark.Value) (ckpt.Run, []*Tensor, error) {
	var run ckpt.Run
	keys, ts, err := tensorDict(fn, "weights", weights)
	if err != nil {
		return run, nil, err
	}
	run.Weights = ckptVars(keys, ts)
	if optV != starlark.None {
		o, ok := optV.(*optimizer)
		if !ok {
			return run, nil, nameErrf(fn, "optim: got %s, want an optimizer", optV.Type())
		}
		run.Optim = &ckpt.Optim{Kind: o.kind, Steps: int64(o.steps())}
		for _, k := range o.names {
			p := ckpt.OptimParam{Name: k, Shape: o.params[k].shape}
			for _, sl := range o.opts[k].State().Slots {
				p.Slots = append(p.Slots, ckpt.Slot{Name: sl.Name, Data: sl.Data})
			}
			run.Optim.Params = append(run.Optim.Params, p)
		}
	}
	grads, err := optionalDict(fn, "grads", gradsV)
	if err != nil {
		return run, nil, err
	}
	if grads == nil {
		return run, ts, nil
	}
	gkeys, gts, err := tensorDict(fn, "grads", grads)
	if err != nil {
		return run, nil, err
	}
	run.Grads = ckptVars(gkeys, gts)
	return run, append(slices.Clip(ts), gts...), nil
}

// ckptVars returns the tensors ts, named by keys, as ckpt.Vars over their memory.
func ckptVars(keys []string, ts []*Tensor) []ckpt.Var {
	vs := make([]ckpt.Var, len(ts))
	for i, t := range ts {
		vs[i] = ckpt.Var{Name: keys[i], Shape: t.shape, Data: t.data}
	}
	return vs
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

// ckptLoadState implements ckpt.load_state: package ckpt checks the whole checkpoint against the
// run's weights and optimizer (ckpt.State.Match); then it restores them and the generator, and
// returns the rest.
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
	run, tensors, err := ckptRun(b.Name(), weights, optV, gradsV)
	if err != nil {
		return nil, err
	}
	run.Taken = taken
	if run.Params, err = s.paramsJSON(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	st, err := ckpt.ReadState(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	r, err := st.Match(run)
	if err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", path, err)
	}
	// The run's side of the checks: every tensor restored must be free to write.
	for _, t := range tensors {
		if err := t.writable(b.Name()); err != nil {
			return nil, err
		}
	}
	fail := func(format string, a ...any) error {
		return nameErrf(b.Name(), "%s: %s", path, fmt.Sprintf(format, a...))
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
	if err := saved.src.UnmarshalBinary(r.RNG); err != nil {
		return nil, fail("tensor %s%s: not a random generator state", ckpt.RNGPrefix, ckpt.RunRNG)
	}

	r.Apply()
	if r.Optim != nil {
		opt := optV.(*optimizer)
		for _, p := range r.Optim.Params {
			ns := optim.State{Steps: int(r.Optim.Steps)}
			for _, sl := range p.Slots {
				ns.Slots = append(ns.Slots, optim.Slot{Name: sl.Name, Data: sl.Data})
			}
			if err := opt.opts[p.Name].SetState(ns); err != nil {
				return nil, fail("optimizer state of %s: %v", p.Name, err)
			}
		}
	}
	s.rng.src.UnmarshalBinary(r.RNG)
	for n, v := range r.Taken { // the values the script took are the checkpoint's: recorded as the run's from now on
		if s.taken == nil {
			s.taken = map[string]json.RawMessage{}
		}
		s.taken[n] = v
	}
	if s.saved == "" {
		s.saved, s.savedStep = path, r.Step // what an interruption before the next save leaves
	}

	if len(r.Changed) > 0 && thread.Print != nil {
		thread.Print(thread, fmt.Sprintf("resume: parameters changed since %s was saved: %s", path, strings.Join(r.Changed, ", ")))
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
		"step":       starlark.MakeInt64(r.Step),
		"times":      times,
		"params":     params,
		"structural": starlark.NewList(structural),
		"meta":       meta,
		"grads":      starlark.Bool(r.Grads),
	}), nil
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
