package ane

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anestar/anestar/mil"
)

// Support is what is known of a program, or of one of its ops or I/O, on the hardware.
type Support uint8

// The statuses, from best to worst.
const (
	Proven  Support = iota // the reference sources ran it on hardware
	Unknown                // not known either way: a warning
	Refused                // the hardware is known to refuse it, or to return wrong data
)

func (s Support) String() string {
	switch s {
	case Proven:
		return "proven"
	case Unknown:
		return "unknown"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("Support(%d)", uint8(s))
}

// Finding is the verdict on one input, output or op of a program, or on the program as a whole.
type Finding struct {
	Support Support
	Rule    string  // the ID of the Rule that decided it (see Rules)
	What    string  // "input `x`", "output `y`", "op `sq` (mul)", or "program"
	Pos     mil.Pos // where in the MIL text, when parsed
	Reason  string  // why, when not proven: "has width 24: the ANE needs a multiple of 32"
	Fix     string  // what to change, when not proven
}

// String writes "output `y` has width 24: the ANE needs a multiple of 32; pad it to 32", with the
// position after What when known.
func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.What)
	if f.Pos.IsValid() {
		fmt.Fprintf(&b, " (%s)", f.Pos)
	}
	if f.Reason == "" {
		b.WriteString(": " + f.Support.String())
		return b.String()
	}
	b.WriteString(" " + f.Reason)
	if f.Fix != "" {
		b.WriteString("; " + f.Fix)
	}
	return b.String()
}

// Verdict is what Eligible found: one finding per input, output and op of main, in that order, then
// the program-wide findings.
type Verdict struct {
	Findings []Finding
	Chip     string // the chip whose limits were applied (ChipAll's "all": every chip's)
}

// With returns the findings of status s.
func (v Verdict) With(s Support) []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if f.Support == s {
			out = append(out, f)
		}
	}
	return out
}

// Support is the worst support of any finding: Refused, Unknown, or Proven when every part is.
func (v Verdict) Support() Support {
	s := Proven
	for _, f := range v.Findings {
		s = max(s, f.Support)
	}
	return s
}

// Err returns nil when nothing is refused, else an *IneligibleError listing the refusals.
func (v Verdict) Err() error {
	if v.Support() != Refused {
		return nil
	}
	return &IneligibleError{Verdict: v}
}

// Ops returns the op kinds of main in order of first use.
func (v Verdict) Ops() []string {
	var kinds []string
	seen := map[string]bool{}
	for _, f := range v.Findings {
		if k, ok := opKindOf(f.What); ok && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// opKindOf returns the kind in an op finding's What, "op `sq` (mul)".
func opKindOf(what string) (string, bool) {
	if !strings.HasPrefix(what, "op ") || !strings.HasSuffix(what, ")") {
		return "", false
	}
	i := strings.LastIndexByte(what, '(')
	return what[i+1 : len(what)-1], i > 0
}

// ErrUnsupportedOp is wrapped by errors about an op a backend cannot run: an op the ANE is known to
// refuse (through *IneligibleError), or one the emulator has no implementation of.
var ErrUnsupportedOp = errors.New("unsupported op")

// IneligibleError is the error of a program that breaks a rule the hardware is known to have.
type IneligibleError struct {
	Verdict Verdict
}

func (e *IneligibleError) Error() string {
	refused := e.Verdict.With(Refused)
	var b strings.Builder
	fmt.Fprintf(&b, "the ANE refuses this program (%d of its parts break a known hardware rule):", len(refused))
	for _, f := range refused {
		b.WriteString("\n  " + f.String())
	}
	b.WriteString("\n(the emulator runs such a program in relaxed mode only: --relaxed)")
	return b.String()
}

// Is reports whether target is ErrUnsupportedOp and a refused op is among the findings.
func (e *IneligibleError) Is(target error) bool {
	if target != ErrUnsupportedOp {
		return false
	}
	for _, f := range e.Verdict.With(Refused) {
		if f.Rule == RuleOp {
			return true
		}
	}
	return false
}
