package builtins

import (
	"strings"
	"time"

	"go.starlark.net/starlark"
)

// Phase timers. Every call of a timed builtin adds its duration to the timer of its phase, so that a
// script learns where its time went without timing each call itself: process.timers() reads the
// totals (and resets them). A call inside another timed call (a builtin that calls back into the
// script) counts once, for the outer one. Work on a queue runs beside the script and is not the
// script's time; waiting for it is.

// phase is a kind of work a script's time goes to.
type phase uint8

const (
	phaseNone    phase = iota // not timed
	phaseCompile              // building programs (mil) and compiling them (ane.compile)
	phaseANE                  // kernel evals
	phaseIO                   // surface reads, writes and copies
	phaseHost                 // host math: tensors, cpu, optimizers, submitting queue jobs
	phaseWait                 // waiting for a queue
	nPhases
)

// phaseNames are the keys of process.timers(), by phase.
var phaseNames = [nPhases]string{"", "compile", "ane", "io", "host", "wait"}

// phaseOf returns the phase of the builtin called name (as go.starlark.net names it: "kernel.eval",
// "surface.write", "cpu.sgemm"). This table is the one place that says which builtin is which work.
func phaseOf(name string) phase {
	switch name {
	case "kernel.eval", "binding.eval", "kernel.start", "binding.start", "kernel.wait", "binding.wait":
		return phaseANE
	case "queue.wait":
		return phaseWait
	case "ane.compile":
		return phaseCompile
	}
	prefix, _, _ := strings.Cut(name, ".")
	switch prefix {
	case "surface":
		return phaseIO
	case "mil":
		return phaseCompile
	case "tensor", "cpu", "optimizer", "queue":
		return phaseHost
	}
	return phaseNone
}

// clockBase is the origin of the timers' monotonic readings: a small model's token makes tens of
// timed calls, and each time.Now reads two clocks.
var clockBase = time.Now()

// timers are a session's phase totals. Only the script's goroutine touches them.
type timers struct {
	total [nPhases]time.Duration // time spent per phase since the start or the last reset
	busy  bool                   // a timed call is running
}

// sessionKey is the thread-local under which a script's threads find their session.
const sessionKey = "anestar.session"

// timed returns fn wrapped so that its calls add to the timer of the phase of the builtin name, or
// fn itself when that builtin is not timed.
func timed(name string, fn impl) impl {
	ph := phaseOf(name)
	if ph == phaseNone || fn == nil {
		return fn
	}
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		s, _ := th.Local(sessionKey).(*session)
		if s == nil || s.timers.busy {
			return fn(th, b, args, kwargs)
		}
		s.timers.busy = true
		t0 := time.Since(clockBase) // one monotonic reading (time.Now reads the wall clock too)
		defer func() {
			s.timers.total[ph] += time.Since(clockBase) - t0
			s.timers.busy = false
		}()
		return fn(th, b, args, kwargs)
	}
}

func (s *session) processTimers(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	reset := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "reset?", &reset); err != nil {
		return nil, err
	}
	d := starlark.NewDict(int(nPhases) - 1)
	for ph := phaseNone + 1; ph < nPhases; ph++ {
		d.SetKey(starlark.String(phaseNames[ph]), starlark.Float(s.timers.total[ph].Seconds()))
	}
	if reset {
		s.timers.total = [nPhases]time.Duration{}
	}
	return d, nil
}
