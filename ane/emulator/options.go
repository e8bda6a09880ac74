package emulator

import (
	"fmt"

	"github.com/anestar/anestar/ane"
)

// Numerics selects how the emulator rounds.
type Numerics uint8

// The numeric modes.
const (
	FP16 Numerics = iota // ANE-faithful: every op's result rounded to fp16 unless declared fp32
	FP32                 // no fp16 rounding of intermediates, for speed comparisons and gradient checks
)

// Options configure an emulator backend.
type Options struct {
	Numerics      Numerics // how results are rounded
	CheckNumerics bool     // Eval fails at the first op whose output holds inf or NaN, naming it
	// Relaxed lets programs through that the ANE refuses (ane.Eligible): fp32 arithmetic, ops the ANE
	// refuses, I/O of any rank and width. It is for experiments and for the conformance suite's
	// emulator-only part; a script that needs it will not run on the ANE. Compile still refuses such a
	// program when Relaxed is false, with the message the ANE backend gives. A program that turns it on
	// says so to its user (the anestar command prints RelaxedNotice).
	Relaxed bool
	// Chip names the chip whose limits the strict mode applies (ane.ParseChip; "" for ane.DefaultChip:
	// all chips' at once off a Mac).
	Chip string
	// OpTimes, when set, collects the time of every step of the kernels compiled with these options
	// (optimes.go); nil clocks nothing.
	OpTimes *OpTimes
}

// RelaxedNotice is what a command says when it turns relaxed mode on.
const RelaxedNotice = "relaxed mode: the emulator runs programs the ANE refuses (fp32 arithmetic, refused ops, " +
	"unaligned I/O); such a run says nothing about the ANE"

// OptionsFrom maps command-line settings onto emulator options; the emulator honours all of them.
func OptionsFrom(s ane.Settings) Options {
	o := Options{CheckNumerics: s.CheckNumerics, Relaxed: s.Relaxed, Chip: s.Chip}
	if s.FP32 {
		o.Numerics = FP32
	}
	return o
}

// String describes the options as their command-line flags, "fp16" when none is set.
func (o Options) String() string {
	flags := ane.Settings{FP32: o.Numerics == FP32, CheckNumerics: o.CheckNumerics, Relaxed: o.Relaxed, Chip: o.Chip}.Flags()
	if len(flags) == 0 {
		return "fp16"
	}
	return fmt.Sprint(flags)
}

// FP32 reports whether the backend computes without fp16 rounding (the conformance suite asks).
func (b *Backend) FP32() bool { return b.opts.Numerics == FP32 }

// Relaxed reports whether the backend lets programs through that the ANE refuses.
func (b *Backend) Relaxed() bool { return b.opts.Relaxed }
