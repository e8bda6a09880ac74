package builtins

import (
	"errors"
	"sync/atomic"

	"go.starlark.net/starlark"
)

// ErrInterrupted is wrapped by the error of a builtin that refuses to go on after a stop request
// (process.exec does not restart an interrupted run).
var ErrInterrupted = errors.New("the run was interrupted")

// Stop is how a host asks a running script to stop at its next safe point, for the first Ctrl-C
// or SIGTERM: a script that polls process.interrupted() at the end of each step sees the request,
// saves its checkpoint and ends. A script that never polls cannot see it; the host cancels the
// run's context instead. Stop is safe for concurrent use.
type Stop struct {
	requested atomic.Bool
	polled    atomic.Bool
}

// Request asks the script to stop. It reports whether the script polls process.interrupted() and
// so will see the request; when it returns false the host should cancel the run.
func (st *Stop) Request() bool {
	st.requested.Store(true)
	return st.polled.Load()
}

// Requested reports whether Request was called.
func (st *Stop) Requested() bool { return st.requested.Load() }

func (s *session) processInterrupted(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if s.cfg.Stop == nil {
		return starlark.False, nil
	}
	s.cfg.Stop.polled.Store(true)
	return starlark.Bool(s.cfg.Stop.Requested()), nil
}
