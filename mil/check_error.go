package mil

import (
	"fmt"
	"strings"
)

// Error is one problem Check or the Builder found.
type Error struct {
	Pos  Pos    // where in the MIL text; zero for built programs
	Op   string // result name of the op at fault ("" when the problem is not an op's)
	Kind string // op kind, e.g. "conv"
	Msg  string // what is wrong
}

// Error returns "line:col: op "name" (kind): msg", leaving out the parts that are unknown.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos.IsValid() {
		b.WriteString(e.Pos.String())
		b.WriteString(": ")
	}
	if e.Op != "" || e.Kind != "" {
		fmt.Fprintf(&b, "op %q", e.Op)
		if e.Kind != "" {
			fmt.Fprintf(&b, " (%s)", e.Kind)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem found in a program, in source order.
type ErrorList []*Error

// Error joins the errors, one per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Err returns l as an error, or nil when l is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
