package private

import (
	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Name is the backend's registry name.
const Name = "ane"

// NominalPeakFLOPS is the ANE's nominal fp16 peak, 15.8 TFLOP/s: the figure the reference training
// program divides by for its "ANE utilization" line. It is a published nominal number for the chip the
// reference ran on, not a measurement, and other chips differ.
const NominalPeakFLOPS = 15.8e12

// Backend compiles MIL programs for the Apple Neural Engine through AppleNeuralEngine.framework.
// Every Backend of a process shares the process's compile count, because the ANE's limit on
// in-memory compiles is per process.
type Backend struct {
	drv  driver   // the framework calls; nil for a Backend not made by Open
	chip ane.Chip // whose limits programs are checked against (Open: the host's)
}

var _ ane.Backend = (*Backend)(nil)

// Probe returns nil when the backend can run on this machine, else why not: the platform is not
// darwin/arm64, a framework did not load (with the dlerror text), or a private class or method is missing.
func Probe() error {
	_, err := loadDriver()
	return err
}

// Open returns a Backend, or Probe's error. The ANE backend has no options: it computes with the
// hardware's own fp16 arithmetic and runs only programs that pass ane.Eligible (the registry's Open
// refuses the emulator's settings with a message).
func Open() (*Backend, error) {
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	return &Backend{drv: drv, chip: ane.DefaultChip()}, nil
}

// Name returns "ane".
func (b *Backend) Name() string { return Name }

// Compile type-checks p, packs its inputs and outputs into one each (ane.CompilePacked), then builds, stages, compiles and loads it with its weight files, and prepares
// its surfaces and request. Every call counts as one compile, success or failure.
func (b *Backend) Compile(p *mil.Program, w mil.Weights) (ane.Kernel, error) {
	if b == nil || b.drv == nil {
		return nil, errNoDriver
	}
	return ane.CompilePackedOn(p, w, b.chip, func(p *mil.Program, w mil.Weights) (ane.Kernel, error) {
		return compile(b.drv, p, w, b.chip)
	})
}

// Compiles is the number of compiles this process has attempted on the ANE backend, through any
// Backend value.
func (b *Backend) Compiles() int { return int(compiles.Load()) }

// PeakFLOPS returns NominalPeakFLOPS.
func (b *Backend) PeakFLOPS() float64 { return NominalPeakFLOPS }
