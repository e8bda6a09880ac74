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

// Numerics selects how the emulator rounds.
type Numerics uint8

// The numeric modes.
const (
	FP16 Numerics = iota // ANE-faithful: every op's result rounded to fp16 unless declared fp32
	FP32                 // no fp16 rounding of intermediates, for speed comparisons and gradient checks
)

// Options configure a backend when it is opened.
type Options struct {
	Numerics      Numerics // emulator rounding mode
	CheckNumerics bool     // report the first op whose output holds inf or NaN (emulator)
}

// ErrClosed is returned (wrapped) by Eval on a kernel that has been closed.
var ErrClosed = errors.New("kernel is closed")
