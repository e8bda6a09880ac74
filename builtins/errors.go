package builtins

import (
	"errors"
	"fmt"
	"strings"

	"go.starlark.net/starlark"
)

// A BuiltinError is an error of a builtin: Name is the builtin's name ("ane.compile"), Err what went
// wrong. It wraps Err, so that errors.As finds the typed errors of the packages beneath
// (*mil.ErrorList, *ckpt.FormatError, ane.ErrClosed, ...) through the *starlark.EvalError that
// carries it to the caller of [Run]. Its message has go.starlark.net's shape, "name: message".
type BuiltinError struct {
	Name string // the builtin's name as a script calls it
	Err  error  // the cause, without the name
}

// Error returns "Name: Err".
func (e *BuiltinError) Error() string { return e.Name + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *BuiltinError) Unwrap() error { return e.Err }

// nameErr returns err as an error of the builtin name (go.starlark.net's nameErr, wrapping).
func nameErr(name string, err error) error { return &BuiltinError{Name: name, Err: err} }

// nameErrf is nameErr of fmt.Errorf(format, args...): format's %w verbs wrap their errors.
func nameErrf(name, format string, args ...any) error {
	return &BuiltinError{Name: name, Err: fmt.Errorf(format, args...)}
}

// fail is go.starlark.net's fail(*args, sep = " ") with the same message, as a [BuiltinError] of
// "fail" so that a script's own failures reach the caller of [Run] as the builtins' errors do.
func fail(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sep := " "
	if err := starlark.UnpackArgs(b.Name(), nil, kwargs, "sep?", &sep); err != nil {
		return nil, err
	}
	var msg strings.Builder
	for i, v := range args {
		if i > 0 {
			msg.WriteString(sep)
		}
		if s, ok := starlark.AsString(v); ok {
			msg.WriteString(s)
		} else {
			msg.WriteString(v.String())
		}
	}
	return nil, nameErr(b.Name(), errors.New(msg.String()))
}

// prefixTrimmed is an error whose message drops a prefix of its cause's (a package's own name, which
// the builtin's name replaces); it unwraps to the cause.
type prefixTrimmed struct {
	err error
	msg string
}

func (e *prefixTrimmed) Error() string { return e.msg }
func (e *prefixTrimmed) Unwrap() error { return e.err }

// trimPrefix returns err with prefix dropped from its message, still wrapping err.
func trimPrefix(err error, prefix string) error {
	return &prefixTrimmed{err: err, msg: strings.TrimPrefix(err.Error(), prefix)}
}
