package ane

import (
	"context"
	"errors"

	"github.com/anestar/anestar/mil"
)

// Backend compiles MIL programs into kernels that run on one kind of device.
type Backend interface {
	// Name is the registry name: "ane" or "emulator".
	Name() string
	// Compile type-checks p, loads its weights and prepares it for evaluation. Every call counts as one
	// compile, success or failure (a program rejected before it reaches the device counts too, which can
	// only make the count run high: the safe side of the ANE's per-process compile limit).
	Compile(p *mil.Program, w mil.Weights) (Kernel, error)
	// Compiles is the number of compiles this process has done on this backend.
	Compiles() int
	// PeakFLOPS is the backend's nominal peak in FLOP/s, for utilisation figures in reports.
	PeakFLOPS() float64
}

// Kernel is a compiled program with one surface per function input and per output.
type Kernel interface {
	// Inputs are the surfaces of main's inputs, in declaration order.
	Inputs() []*Surface
	// Outputs are the surfaces of main's outputs, in return order.
	Outputs() []*Surface
	// Eval runs the program once, reading the input surfaces and writing the output surfaces.
	Eval(ctx context.Context) error
	// Close releases the kernel and its surfaces; later calls to Eval, and accesses to its surfaces,
	// fail with an error wrapping ErrClosed. Read what you need from the outputs before closing.
	Close() error
}

// Settings are what a command line asks of the backend it opens by name (Open, Entry.Open): each
// backend maps them onto its own options (emulator.Options; the ANE backend has none) and refuses, with
// a message, every one it cannot honour, rather than drop it without a word.
type Settings struct {
	FP32          bool // compute without fp16 rounding (the emulator's Numerics FP32)
	CheckNumerics bool // fail at the first op whose output holds inf or NaN (emulator)
	Relaxed       bool // let programs through that the ANE refuses (Eligible), and say so (emulator)
}

// Flags returns the command-line flags of the settings that are set, e.g. ["--fp32", "--relaxed"].
func (s Settings) Flags() []string {
	var out []string
	if s.FP32 {
		out = append(out, "--fp32")
	}
	if s.CheckNumerics {
		out = append(out, "--check-numerics")
	}
	if s.Relaxed {
		out = append(out, "--relaxed")
	}
	return out
}

// ErrClosed is returned (wrapped) by Eval on a kernel that has been closed.
var ErrClosed = errors.New("kernel is closed")
