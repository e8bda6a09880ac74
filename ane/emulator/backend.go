package emulator

import (
	"fmt"
	"sync/atomic"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/mil"
)

// Priority is the emulator's registry priority: below the ANE, so that "auto" prefers real hardware.
const Priority = 0

func init() {
	ane.Register(ane.Entry{
		Name:     "emulator",
		Summary:  "runs MIL programs on the CPU with the ANE's fp16 numerics (sgemm through the cpu package's BLAS)",
		Priority: Priority,
		Open:     func(s ane.Settings) (ane.Backend, error) { return New(OptionsFrom(s)), nil },
	})
}

// Backend is the CPU emulator of the Apple Neural Engine.
type Backend struct {
	opts     Options       // numerics, checks and relaxed mode for every kernel it compiles
	compiles *atomic.Int64 // Compile calls so far, on it and its streams
	ar       *arena        // scratch shared by its kernels, and buffers of closed kernels for the next compiles
	streams  *streams      // the streams (Stream), shared with them
}

var _ ane.Backend = (*Backend)(nil)

// New returns an emulator backend with the given options.
func New(opts Options) *Backend {
	b := &Backend{opts: opts, compiles: new(atomic.Int64), ar: newArena(), streams: &streams{}}
	b.streams.all = map[int]*Backend{0: b}
	return b
}

// Name is "emulator".
func (b *Backend) Name() string { return "emulator" }

// Options are the options the backend was opened with.
func (b *Backend) Options() Options { return b.opts }

// ClockOps makes the kernels compiled from now on add the time of each of their steps to t
// (Options.OpTimes), on every stream; nil stops it for later compiles. Call it before compiling, not during.
func (b *Backend) ClockOps(t *OpTimes) {
	b.streams.mu.Lock()
	defer b.streams.mu.Unlock()
	for _, s := range b.streams.all {
		s.opts.OpTimes = t
	}
}

// Compiles is the number of Compile calls on this backend and its streams, successful or not.
func (b *Backend) Compiles() int { return int(b.compiles.Load()) }

// PeakFLOPS is the emulator's peak: the rate of a 512x512x512 sgemm with the BLAS in use, measured once
// per machine, BLAS and core and cached (cpu.PeakFLOPS). It is what a 1x1 conv or a large matmul can
// reach, which makes it the fair denominator for utilisation figures on the CPU.
func (b *Backend) PeakFLOPS() float64 { return cpu.PeakFLOPS() }

// Compile checks p, then, unless the backend is relaxed, packs its inputs and outputs into one each
// (ane.CompilePacked) and refuses it as the ANE backend does when it breaks a rule the hardware is known
// to have (ane.Eligible, the same message), so that what runs here runs on the ANE. It resolves p's shapes, decodes its constant weights once, orders its ops and
// preallocates every intermediate buffer, sharing them with the backend's other kernels (scratch.go)
// and reusing those of kernels closed since the last Eval (recycle.go). Its kernel's Eval allocates
// nothing; the Evals of one backend's kernels take turns.
func (b *Backend) Compile(p *mil.Program, w mil.Weights) (ane.Kernel, error) {
	b.compiles.Add(1)
	if p == nil {
		return nil, fmt.Errorf("emulator: compile: no program")
	}
	if err := mil.Check(p); err != nil {
		return nil, fmt.Errorf("emulator: compile: %w", err)
	}
	var k ane.Kernel
	var err error
	if b.opts.Relaxed { // the ports as declared
		k, err = b.compile(p, w)
	} else {
		chip := b.chip()
		k, err = ane.CompilePackedOn(p, w, chip, func(p *mil.Program, w mil.Weights) (ane.Kernel, error) {
			if err := ane.EligibleOn(p, chip).Err(); err != nil {
				return nil, err
			}
			return b.compile(p, w)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("emulator: compile: %w", err)
	}
	return k, nil
}

// chip is the chip whose limits the strict mode applies: the options' (an unknown name, which the
// command line refuses first, is every chip's).
func (b *Backend) chip() ane.Chip {
	c, err := ane.ParseChip(b.opts.Chip)
	if err != nil {
		return ane.ChipAll
	}
	return c
}

// compile compiles a checked program with main's ports as it declares them.
func (b *Backend) compile(p *mil.Program, w mil.Weights) (ane.Kernel, error) {
	fn := p.Main()
	if fn == nil {
		return nil, fmt.Errorf("program has no main function")
	}
	return compileFunc(fn, w, b.opts, b.ar)
}
