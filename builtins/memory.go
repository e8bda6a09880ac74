package builtins

import (
	runtimemetrics "runtime/metrics"

	"github.com/anestar/anestar/internal/memlimit"
	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// Memory figures. What a model holds in tensors is the script's to say (it made them); what the host
// holds for kernels is known here: the bytes of every surface of the kernels and bindings open now,
// and, for each kernel, the most bytes of its program's values alive at once, which the emulator
// plans as its working memory. Both are known in a dry run too, where the surfaces exist and nothing
// is compiled, so that `anestar check` can estimate a run's memory before it starts.

// processMemory is process.memory(): the process's resident set now, its peak, and at the start of
// the run.
func (s *session) processMemory(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	rss, peak, _ := memlimit.Resident()
	return starlarkstruct.FromStringDict(starlark.String("memory"), starlark.StringDict{
		"rss":        starlark.MakeUint64(rss),
		"peak_rss":   starlark.MakeUint64(peak),
		"start_rss":  starlark.MakeUint64(s.startRSS),
		"gc_percent": starlark.MakeInt64(gcPercent()),
	}), nil
}

// gcPercent is the collector's growth target (GOGC, debug.SetGCPercent) in percent, -1 when it is off.
func gcPercent() int64 {
	sample := []runtimemetrics.Sample{{Name: "/gc/gogc:percent"}}
	runtimemetrics.Read(sample)
	if sample[0].Value.Kind() != runtimemetrics.KindUint64 {
		return 100 // the runtime's default, where the metric is not known
	}
	p := sample[0].Value.Uint64()
	if p > 1<<20 {
		return -1
	}
	return int64(p)
}

// aneMemory is ane.memory(): the bytes of the open kernels' and bindings' surfaces and of their
// programs' working memory.
func (s *session) aneMemory(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	surfaces, scratch, consts, kernels, bindings := 0, 0, 0, 0, 0
	for _, bd := range s.bindings {
		if bd.closed || bd.owner.closed {
			continue
		}
		for _, sf := range bd.b.Inputs() {
			surfaces += sf.Bytes()
		}
		for _, sf := range bd.b.Outputs() {
			surfaces += sf.Bytes()
		}
		bindings++
		if bd == &bd.owner.binding {
			scratch += bd.owner.scratch
			consts += bd.owner.consts
			kernels++
		}
	}
	return starlarkstruct.FromStringDict(starlark.String("memory"), starlark.StringDict{
		"surfaces": starlark.MakeInt(surfaces),
		"scratch":  starlark.MakeInt(scratch),
		"consts":   starlark.MakeInt(consts),
		"kernels":  starlark.MakeInt(kernels),
		"bindings": starlark.MakeInt(bindings),
	}), nil
}

// track records a new kernel's or binding's surfaces for ane.memory, dropping closed ones from the
// list first, so that a script that recompiles every batch keeps a short list.
func (s *session) track(bd *binding) {
	keep := s.bindings[:0]
	for _, o := range s.bindings {
		if !o.closed && !o.owner.closed {
			keep = append(keep, o)
		}
	}
	clear(s.bindings[len(keep):])
	s.bindings = append(keep, bd)
}

// liveBytes is the most bytes of fn's values alive at once, each held in fp32 as the emulator holds
// them: its inputs from the start to their last use, each op's results from that op to their last
// use, its outputs to the end; consts are weights, not counted. The emulator plans its buffers this
// way, so this is its working memory for the program (before it shares buffers between kernels).
func liveBytes(fn *mil.Func) int {
	if fn == nil {
		return 0
	}
	end := len(fn.Ops)
	last := map[string]int{} // value name -> index of the last op that reads it
	for i, op := range fn.Ops {
		for _, a := range op.Args {
			for _, o := range a.Operands {
				if o.Ref != nil {
					last[o.Ref.Name] = i
				}
			}
		}
	}
	for _, o := range fn.Outputs {
		last[o.Name] = end
	}
	size := map[string]int{}
	dies := map[int][]string{} // op index -> the values whose last reader it is
	live := 0
	hold := func(v *mil.Var) {
		n := 4 * max(v.Type.NumElements(), 0)
		size[v.Name] = n
		live += n
		at, ok := last[v.Name]
		if !ok {
			at = -1 // never read: dies where it is made
		}
		dies[at] = append(dies[at], v.Name)
	}
	for _, in := range fn.Inputs {
		hold(in)
	}
	peak := live
	for i, op := range fn.Ops {
		if op.Kind != "const" {
			for _, r := range op.Results {
				hold(r)
			}
		}
		peak = max(peak, live)
		for _, name := range append(dies[i], dies[-1]...) {
			live -= size[name]
		}
		dies[-1] = nil
	}
	return peak
}

// constBytes is the bytes of fn's consts (its weights among them) held in fp32, as the emulator
// decodes them once at compile.
func constBytes(fn *mil.Func) int {
	n := 0
	if fn == nil {
		return 0
	}
	for _, op := range fn.Ops {
		if op.Kind == "const" {
			for _, r := range op.Results {
				n += 4 * max(r.Type.NumElements(), 0)
			}
		}
	}
	return n
}
