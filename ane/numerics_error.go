package ane

import "fmt"

// NumericsError reports the first op of an eval whose result holds inf or NaN, found by a backend's
// numerics check (the emulator's CheckNumerics): the diagnosis the real ANE never gives.
type NumericsError struct {
	Eval   int    // the kernel's eval count (1 for its first eval)
	Line   int    // the op's line in the MIL text; 0 for a built program that was never printed
	Kind   string // op kind, e.g. "softmax"
	Op     string // the op's first result name
	Result string // the result that holds the value
	Value  float32
	Index  int   // element index within the result
	Shape  []int // the result's shape
}

func (e *NumericsError) Error() string {
	at := fmt.Sprintf("op %q (%s)", e.Op, e.Kind)
	if e.Line > 0 {
		at = fmt.Sprintf("MIL line %d: %s %q", e.Line, e.Kind, e.Op)
	}
	return fmt.Sprintf("eval %d: numerics check: %s: result %q holds %v at element %d (shape %v), the first non-finite value of this eval",
		e.Eval, at, e.Result, e.Value, e.Index, e.Shape)
}
