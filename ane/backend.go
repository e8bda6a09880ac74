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

// Streams is implemented by a backend whose kernels can evaluate at the same time when compiled on
// different streams (the emulator's share scratch within a stream and take turns there). Stream(0) is
// the backend itself; a backend without it evaluates any of its kernels at the same time as another's.
type Streams interface {
	Stream(i int) (Backend, error)
}

// Binding is one full set of surfaces of a compiled program: one per input of main and one per output,
// of the program's types. Evaluating it runs the kernel's program on its surfaces and on no others, so
// the bindings of one kernel are independent: writing one's inputs changes no other's outputs.
type Binding interface {
	// Inputs are the surfaces of main's inputs, in declaration order.
	Inputs() []*Surface
	// Outputs are the surfaces of main's outputs, in return order.
	Outputs() []*Surface
	// Input is the surface of the declared input called name: when the program's inputs were packed
	// into one (CompilePacked), a view of its part of the packed surface, else that input's own surface.
	// An unknown name is an error.
	Input(name string) (*Surface, error)
	// Output is Input for the declared outputs.
	Output(name string) (*Surface, error)
	// Eval runs the program once, reading the input surfaces and writing the output surfaces.
	Eval(ctx context.Context) error
	// Close releases the binding and its surfaces; later calls to Eval, and accesses to its surfaces,
	// fail with an error wrapping ErrClosed. Read what you need from the outputs before closing.
	// Closing twice is harmless.
	Close() error
}

// Kernel is a compiled program. It is its own first binding: Inputs, Outputs and Eval are those of the
// surfaces it was compiled with. Bind makes more bindings of the same compiled program, so that several
// sets of surfaces (the layers of a model, each with its own weights in its inputs) share one compile.
// Its methods and its bindings' may be called from several goroutines at once: a backend makes the
// Evals of one kernel's bindings take turns where they share state.
type Kernel interface {
	Binding
	// Bind returns a new binding of the kernel's program with surfaces of its own, read zero. It does
	// not compile: the backend's compile count does not move. It fails with an error wrapping ErrClosed
	// once the kernel is closed.
	Bind() (Binding, error)
	// Close releases the kernel, its surfaces and every binding made by Bind: later calls to Eval on
	// any of them, and accesses to their surfaces, fail with an error wrapping ErrClosed.
}

// Settings are what a command line asks of the backend it opens by name (Open, Entry.Open): each
// backend maps them onto its own options (emulator.Options; the ANE backend has none) and refuses, with
// a message, every one it cannot honour, rather than drop it without a word.
type Settings struct {
	FP32          bool // compute without fp16 rounding (the emulator's Numerics FP32)
	CheckNumerics bool // fail at the first op whose output holds inf or NaN (emulator)
	Relaxed       bool // let programs through that the ANE refuses (Eligible), and say so (emulator)
	// Chip names the chip whose limits programs are checked against (ParseChip: m1 .. m5, all; ""
	// for DefaultChip). Both backends honour it: it only narrows what compiles.
	Chip string
}

// Flags returns the command-line flags of the settings that are set, e.g. ["--fp32", "--relaxed"].
func (s Settings) Flags() []string {
	var out []string
	if s.Chip != "" {
		out = append(out, "--chip="+s.Chip)
	}
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

// ErrClosed is returned (wrapped) by Eval on a kernel or binding that has been closed, and by accesses
// to its surfaces.
var ErrClosed = errors.New("kernel is closed")
