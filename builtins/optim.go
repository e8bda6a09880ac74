package builtins

import (
	"fmt"
	"sort"
	"unsafe"

	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/optim"
	"go.starlark.net/starlark"
)

func (s *session) optimModule() *moduleDef {
	return &moduleDef{
		name: "optim",
		doc: "Optimizers over a dict of named parameter tensors, and learning-rate schedules. An optimizer " +
			"keeps per-element state for each parameter (Adam's m and v, ...) and a step count; state() " +
			"gives it all as tensors for a checkpoint and load_state() restores it exactly. Updates follow " +
			"w -= lr * update(g).",
		fns: []fnDef{
			{sig: "sgd(params)", doc: "Plain gradient descent.", fn: optimNew("sgd")},
			{sig: "momentum(params, beta = 0.9, nesterov = False, dampening = 0.0)", doc: "SGD with momentum: v = beta v + (1 - dampening) g, then " +
				"w -= lr v, or w -= lr (g + beta v) with nesterov. dampening = 0 is torch's form; dampening = beta is libann's averaged momentum " +
				"v = beta v + (1 - beta) g. dampening must be in [0, 1].", fn: optimNew("momentum")},
			{sig: "adagrad(params, eps = 1e-8)", doc: "AdaGrad.", fn: optimNew("adagrad")},
			{sig: "rmsprop(params, rho = 0.9, eps = 1e-8)", doc: "RMSProp.", fn: optimNew("rmsprop")},
			{sig: "adam(params, b1 = 0.9, b2 = 0.999, eps = 1e-8)", doc: "Adam with bias correction, as the reference trains with.", fn: optimNew("adam")},
			{sig: "adamw(params, b1 = 0.9, b2 = 0.999, eps = 1e-8, weight_decay = 0.01, no_decay = [])", doc: "Adam with decoupled weight decay (torch.optim.AdamW): " +
				"w *= 1 - lr * weight_decay before each update, except for the parameters named in no_decay (norm gains, biases: " +
				"a language model decays its matrices only).", fn: optimNew("adamw")},
			{sig: "constant(lr)", doc: "A schedule: lr at every step.", fn: schedNew("constant")},
			{sig: "step_decay(base, gamma, every)", doc: "A schedule: base * gamma^floor(step / every).", fn: schedNew("step_decay")},
			{sig: "exponential(base, gamma)", doc: "A schedule: base * gamma^step.", fn: schedNew("exponential")},
			{sig: "cosine(base, floor, steps)", doc: "A schedule: from base down to floor over steps along half a cosine, then floor.", fn: schedNew("cosine")},
			{sig: "warmup(steps, then)", doc: "A schedule: a linear ramp to then(0) over steps, then the schedule then, restarted at 0: step s < steps gives then(0) * (s + 1) / steps, later steps then(s - steps). then is a schedule or any function of the step that returns a number (a def or a lambda: a custom schedule).", fn: schedNew("warmup")},
		},
	}
}

// optimizer updates a set of named parameters.
type optimizer struct {
	kind     string
	names    []string // sorted
	params   map[string]*Tensor
	opts     map[string]optim.Optimizer
	disjoint bool // no two parameters share memory: step updates them side by side
}

var optimizerType = &typeDef{
	name: "optimizer",
	doc:  "An optimizer over named parameters (from optim.adam(...) and the like).",
	members: []fnDef{
		{sig: "kind", doc: "\"sgd\", \"momentum\", \"adagrad\", \"rmsprop\", \"adam\" or \"adamw\"."},
		{sig: "steps", doc: "The number of steps taken (Adam's t)."},
		{sig: "step(grads, lr, grad_scale = 1.0)", doc: "Updates every parameter from grads, a dict with the same names, with learning rate lr. " +
			"grad_scale multiplies each gradient element as it is read, the gradients left as they are: cpu.clip_factor's factor, " +
			"the bits of unscale_clip then step in a pass less.", fn: optStep},
		{sig: "state()", doc: "A dict of tensors: \"NAME/SLOT\" for each parameter's state (views of the live state) and \"steps\", the step count as a 1-element tensor.", fn: optState},
		{sig: "load_state(state)", doc: "Restores a dict made by state() (for example read back from a checkpoint); every slot must be present with its size.", fn: optLoadState},
	},
}

var optimizerMethods = newMethodSet(optimizerType)

var _ starlark.HasAttrs = (*optimizer)(nil)

func (o *optimizer) String() string {
	return fmt.Sprintf("optimizer(%s, %d params)", o.kind, len(o.names))
}
func (o *optimizer) Type() string          { return "optimizer" }
func (o *optimizer) Freeze()               {}
func (o *optimizer) Truth() starlark.Bool  { return true }
func (o *optimizer) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: optimizer") }
func (o *optimizer) AttrNames() []string   { return optimizerMethods.names }
func (o *optimizer) Attr(name string) (starlark.Value, error) {
	switch name {
	case "kind":
		return starlark.String(o.kind), nil
	case "steps":
		return starlark.MakeInt(o.steps()), nil
	}
	return optimizerMethods.bind(o, name), nil
}

func (o *optimizer) steps() int {
	if len(o.names) == 0 {
		return 0
	}
	return o.opts[o.names[0]].State().Steps
}

func optimNew(kind string) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var params *starlark.Dict
		b1, b2, eps, wd, beta, rho := number(0.9), number(0.999), number(1e-8), number(0.01), number(0.9), number(0.9)
		var dampening number
		var noDecay *starlark.List
		nesterov := false
		pairs := []any{"params", &params}
		switch kind {
		case "momentum":
			pairs = append(pairs, "beta?", &beta, "nesterov?", &nesterov, "dampening?", &dampening)
		case "adagrad":
			pairs = append(pairs, "eps?", &eps)
		case "rmsprop":
			pairs = append(pairs, "rho?", &rho, "eps?", &eps)
		case "adam":
			pairs = append(pairs, "b1?", &b1, "b2?", &b2, "eps?", &eps)
		case "adamw":
			pairs = append(pairs, "b1?", &b1, "b2?", &b2, "eps?", &eps, "weight_decay?", &wd, "no_decay?", &noDecay)
		}
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
			return nil, err
		}
		if !(dampening >= 0 && dampening <= 1) {
			return nil, nameErrf(b.Name(), "dampening = %g, want a number in [0, 1]", float64(dampening))
		}
		keys, vals, err := dictItems(b.Name(), "params", params)
		if err != nil {
			return nil, err
		}
		skip, err := noDecayNames(b.Name(), noDecay, keys)
		if err != nil {
			return nil, err
		}
		o := &optimizer{kind: kind, params: map[string]*Tensor{}, opts: map[string]optim.Optimizer{}}
		for i, k := range keys {
			t, ok := vals[i].(*Tensor)
			if !ok {
				return nil, nameErrf(b.Name(), "params[%q]: got %s, want tensor", k, vals[i].Type())
			}
			n := t.Size()
			var opt optim.Optimizer
			switch kind {
			case "sgd":
				opt = optim.NewSGD(n)
			case "momentum":
				m := optim.NewMomentum(n, float32(beta), nesterov)
				m.Dampening = float32(dampening)
				opt = m
			case "adagrad":
				opt = optim.NewAdaGrad(n, float32(eps))
			case "rmsprop":
				opt = optim.NewRMSProp(n, float32(rho), float32(eps))
			case "adam":
				opt = optim.NewAdam(n, float32(b1), float32(b2), float32(eps))
			case "adamw":
				if skip[k] {
					opt = optim.NewAdam(n, float32(b1), float32(b2), float32(eps))
				} else {
					opt = optim.NewAdamW(n, float32(b1), float32(b2), float32(eps), float32(wd))
				}
			}
			o.params[k], o.opts[k] = t, opt
			o.names = append(o.names, k)
		}
		sort.Strings(o.names)
		o.disjoint = disjoint(o.names, o.params)
		return o, nil
	}
}

// noDecayNames checks that every name of list (nil: none) is one of keys and returns them as a set.
func noDecayNames(fn string, list *starlark.List, keys []string) (map[string]bool, error) {
	set := map[string]bool{}
	if list == nil {
		return set, nil
	}
	known := map[string]bool{}
	for _, k := range keys {
		known[k] = true
	}
	for i := range list.Len() {
		n, ok := starlark.AsString(list.Index(i))
		if !ok {
			return nil, fmt.Errorf("%s: no_decay[%d]: got %s, want a parameter name", fn, i, list.Index(i).Type())
		}
		if !known[n] {
			return nil, fmt.Errorf("%s: no_decay[%d] = %q is not a parameter (%v)", fn, i, n, keys)
		}
		set[n] = true
	}
	return set, nil
}

func optStep(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	o := b.Receiver().(*optimizer)
	var grads *starlark.Dict
	var lr number
	gscale := number(1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "grads", &grads, "lr", &lr, "grad_scale?", &gscale); err != nil {
		return nil, err
	}
	keys, vals, err := dictItems(b.Name(), "grads", grads)
	if err != nil {
		return nil, err
	}
	g := map[string]*Tensor{}
	for i, k := range keys {
		t, ok := vals[i].(*Tensor)
		if !ok {
			return nil, nameErrf(b.Name(), "grads[%q]: got %s, want tensor", k, vals[i].Type())
		}
		w, ok := o.params[k]
		if !ok {
			return nil, nameErrf(b.Name(), "grads[%q]: not a parameter of this optimizer (%v)", k, o.names)
		}
		if t.Size() != w.Size() {
			return nil, nameErrf(b.Name(), "grads[%q] %s has %d elements, the parameter %s has %d", k, t, t.Size(), w, w.Size())
		}
		g[k] = t
	}
	for _, k := range o.names {
		if g[k] == nil {
			return nil, nameErrf(b.Name(), "grads has no %q", k)
		}
		if err := g[k].readable(b.Name()); err != nil {
			return nil, err
		}
		if err := o.params[k].writable(b.Name()); err != nil {
			return nil, err
		}
	}
	// The parameters update side by side: one tensor's update at a time left a core idle through
	// each small one and at each one's end (the language model's 38 AdamW updates took as long on two
	// cores as on one, a single tensor of their size a third less). Each element's update is its own,
	// so the bits do not depend on who runs it; parameters that share memory update in turn.
	errs := make([]error, len(o.names))
	each := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			k := o.names[i]
			errs[i] = o.opts[k].StepScaled(o.params[k].data, g[k].data, float32(lr), float32(gscale))
		}
	}
	if o.disjoint {
		par.For(len(o.names), 1, each)
	} else {
		each(0, len(o.names))
	}
	for i, err := range errs {
		if err != nil {
			return nil, nameErrf(b.Name(), "%s: %w", o.names[i], err)
		}
	}
	return starlark.None, nil
}

// disjoint reports whether no two of the parameters named share memory.
func disjoint(names []string, params map[string]*Tensor) bool {
	type span struct{ lo, hi uintptr }
	var ss []span
	for _, k := range names {
		if d := params[k].data; len(d) > 0 {
			lo := uintptr(unsafe.Pointer(&d[0]))
			ss = append(ss, span{lo, lo + uintptr(4*len(d))})
		}
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].lo < ss[j].lo })
	for i := 1; i < len(ss); i++ {
		if ss[i].lo < ss[i-1].hi {
			return false
		}
	}
	return true
}

func optState(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	o := b.Receiver().(*optimizer)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	d := starlark.NewDict(0)
	for _, k := range o.names {
		for _, sl := range o.opts[k].State().Slots {
			t, _ := TensorOf(sl.Data, len(sl.Data))
			d.SetKey(starlark.String(k+"/"+sl.Name), t)
		}
	}
	steps, _ := TensorOf([]float32{float32(o.steps())}, 1)
	d.SetKey(starlark.String("steps"), steps)
	return d, nil
}

func optLoadState(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	o := b.Receiver().(*optimizer)
	var st *starlark.Dict
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "state", &st); err != nil {
		return nil, err
	}
	get := func(key string) (*Tensor, error) {
		v, found, _ := st.Get(starlark.String(key))
		if !found {
			return nil, nameErrf(b.Name(), "state has no %q", key)
		}
		t, ok := v.(*Tensor)
		if !ok {
			return nil, nameErrf(b.Name(), "state[%q]: got %s, want tensor", key, v.Type())
		}
		return t, nil
	}
	stepsT, err := get("steps")
	if err != nil {
		return nil, err
	}
	if stepsT.Size() != 1 {
		return nil, nameErrf(b.Name(), "state[\"steps\"] has %d elements, want 1", stepsT.Size())
	}
	steps := int(stepsT.data[0])
	// Check everything before changing anything.
	news := map[string]optim.State{}
	for _, k := range o.names {
		cur := o.opts[k].State()
		ns := optim.State{Steps: steps}
		for _, sl := range cur.Slots {
			t, err := get(k + "/" + sl.Name)
			if err != nil {
				return nil, err
			}
			if t.Size() != len(sl.Data) {
				return nil, nameErrf(b.Name(), "state[%q] has %d elements, want %d", k+"/"+sl.Name, t.Size(), len(sl.Data))
			}
			if err := t.readable(b.Name()); err != nil {
				return nil, err
			}
			ns.Slots = append(ns.Slots, optim.Slot{Name: sl.Name, Data: append([]float32(nil), t.data...)})
		}
		news[k] = ns
	}
	for _, k := range o.names {
		if err := o.opts[k].SetState(news[k]); err != nil {
			return nil, nameErrf(b.Name(), "%s: %w", k, err)
		}
	}
	return starlark.None, nil
}

// schedule is a learning-rate schedule, callable with a step number: a optim.Schedule, or a warmup in
// front of a script's function of the step.
type schedule struct {
	desc string
	s    optim.Schedule    // the schedule; nil when then is set
	then starlark.Callable // optim.warmup(steps, f) of a function f: f(step - steps) after the ramp
	ramp int               // the warmup's steps, with then
}

var _ starlark.Callable = (*schedule)(nil)

func (s *schedule) String() string        { return s.desc }
func (s *schedule) Type() string          { return "schedule" }
func (s *schedule) Freeze()               {}
func (s *schedule) Truth() starlark.Bool  { return true }
func (s *schedule) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: schedule") }
func (s *schedule) Name() string          { return "schedule" }
func (s *schedule) CallInternal(thread *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var step int
	if err := starlark.UnpackArgs(s.desc, args, kwargs, "step", &step); err != nil {
		return nil, err
	}
	if s.then != nil {
		return s.warmupCall(thread, step)
	}
	return starlark.Float(s.s.LR(step)), nil
}

// warmupCall is optim.Warmup's rule in front of a script's function: a linear ramp to then(0) over the
// first ramp steps, then then(step - ramp).
func (s *schedule) warmupCall(thread *starlark.Thread, step int) (starlark.Value, error) {
	at := step - max(s.ramp, 0)
	if step < s.ramp {
		at = 0
	}
	v, err := starlark.Call(thread, s.then, starlark.Tuple{starlark.MakeInt(at)}, nil)
	if err != nil {
		return nil, err
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return nil, fmt.Errorf("%s: then(%d) returned %s, want a number", s.desc, at, v.Type())
	}
	if step < s.ramp {
		f = f * float64(max(step, 0)+1) / float64(s.ramp)
	}
	return starlark.Float(f), nil
}

var scheduleType = &typeDef{
	name:    "schedule",
	doc:     "A learning-rate schedule (from optim.cosine(...) and the like): `sched(step)` is the rate for step, counting from 0, a float.",
	members: []fnDef{},
}

func schedNew(kind string) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var base, gamma, floor number
		var every, steps int
		var then starlark.Callable
		var err error
		var sc optim.Schedule
		switch kind {
		case "constant":
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "lr", &base)
			sc = optim.Constant{Rate: float32(base)}
		case "step_decay":
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "base", &base, "gamma", &gamma, "every", &every)
			if err == nil && every < 1 {
				err = nameErrf(b.Name(), "every = %d: want at least 1 step between decays", every)
			}
			sc = optim.StepDecay{Base: float32(base), Gamma: float32(gamma), Every: every}
		case "exponential":
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "base", &base, "gamma", &gamma)
			sc = optim.Exponential{Base: float32(base), Gamma: float32(gamma)}
		case "cosine":
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "base", &base, "floor", &floor, "steps", &steps)
			sc = optim.Cosine{Base: float32(base), Floor: float32(floor), Steps: steps}
		case "warmup":
			err = starlark.UnpackArgs(b.Name(), args, kwargs, "steps", &steps, "then", &then)
			if err != nil {
				break
			}
			if ts, ok := then.(*schedule); ok && ts.s != nil {
				sc = optim.Warmup{Steps: steps, Then: ts.s}
				break
			}
			return &schedule{desc: "optim.warmup(...)", then: then, ramp: steps}, nil
		}
		if err != nil {
			return nil, err
		}
		return &schedule{desc: "optim." + kind + "(...)", s: sc}, nil
	}
}
