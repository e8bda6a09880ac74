package builtins

import (
	"errors"
	"fmt"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/par"
	"go.starlark.net/starlark"
)

// Evals beside the script. binding.start() runs a binding's eval on a goroutine of its own and returns;
// binding.wait() waits for it and reports its error. Between the two the script works on, and the
// binding's surfaces are off limits (their methods are errors): the eval reads and writes them. Two
// evals under way at once run side by side when their kernels were compiled on different streams
// (ane.compile's stream); on one stream they take turns. On the emulator, whose evals run on the
// host's cores, a started eval counts as a core held (par.Occupy), so the loops of the evals and of
// the script run on their own goroutines rather than splitting across cores the evals already fill.

// startMember and waitMember are the members kernels and bindings share.
var (
	startMember = fnDef{sig: "start()", doc: "Starts an eval of the program on this binding's surfaces and returns at once; wait() " +
		"waits for it. Meanwhile the script works on, the binding's surfaces cannot be used (their methods are errors), and " +
		"another start() or eval() of the binding is an error. Evals of kernels compiled on different streams " +
		"(ane.compile(program, stream = i)) run at the same time, each on a core of its own; those of one stream take turns. An eval no " +
		"wait() takes is waited for when the run ends, its error a warning.", fn: bindingStart}
	waitMember = fnDef{sig: "wait()", doc: "Waits for the eval start() began and fails as eval() would have; an error when none was started.", fn: bindingWait}
)

// busyErr is the error of a use of bd, or of one of its surfaces, while its started eval is under way.
func (bd *binding) busyErr(fn string) error {
	if bd != nil && bd.pending != nil {
		return nameErrf(fn, "the binding's eval is under way (started by start()): call wait() first")
	}
	return nil
}

// evalReady is the binding eval() or start() was called on (without arguments), when it is open and
// has no eval under way.
func evalReady(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (*binding, error) {
	bd := recvBinding(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := bd.closedErr(b.Name()); err != nil {
		return nil, err
	}
	return bd, bd.busyErr(b.Name())
}

func bindingStart(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	bd, err := evalReady(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	bd.pending = done
	s := bd.s
	s.started.Add(1)
	release := func() {}
	if s.backend != nil && s.backend.Name() == "emulator" { // its evals run on the host's cores
		release = par.Occupy()
	}
	go func() {
		defer s.started.Done()
		err := bd.b.Eval(s.ctx)
		release()
		done <- err
	}()
	return starlark.None, nil
}

func bindingWait(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	bd := recvBinding(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if bd.pending == nil {
		return nil, nameErrf(b.Name(), "no eval was started on this binding (start() starts one)")
	}
	err := <-bd.pending
	bd.pending = nil
	if err != nil {
		return nil, bd.evalErr(b.Name(), err)
	}
	bd.evals++
	return starlark.None, nil
}

// evalErr is the script's error for eval error err of bd: a numerics error names the script line
// that built the op.
func (bd *binding) evalErr(fn string, err error) error {
	var ne *ane.NumericsError
	if errors.As(err, &ne) && bd.owner.where[ne.Op] != "" {
		return nameErrf(fn, "%w (op %q was built at %s)", err, ne.Op, bd.owner.where[ne.Op])
	}
	return nameErr(fn, err)
}

// settle waits for bd's started eval, if any, dropping its result: before the binding closes.
func (bd *binding) settle() {
	if bd.pending != nil {
		<-bd.pending
		bd.pending = nil
	}
}

// unwaited waits, at the end of the run, for the evals that start() began and no wait() took, and
// warns of each one's error, which no call reported.
func (s *session) unwaited() {
	for _, bd := range s.bindings {
		if bd.pending == nil {
			continue
		}
		if err := <-bd.pending; err != nil {
			fmt.Fprintf(s.warnWriter(), "anestar: warning: an eval started by start() failed and no wait() reported it: %v\n", err)
		}
		bd.pending = nil
	}
}
