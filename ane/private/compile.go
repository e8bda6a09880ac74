package private

import (
	"errors"
	"fmt"

	"github.com/anestar/anestar/mil"
)

// compile turns p into a loaded kernel through drv. It first type-checks p and its weights (mil.Check,
// mil.CheckWeights) and sizes its surfaces, so that a bad program fails with a message naming the place
// before anything reaches the framework. Every call counts as a compile, as on every backend: the count
// can only overestimate what the framework has compiled, which errs on the safe side of its limit. Then it follows the reference's sequence: build the in-memory model from the MIL
// text and weights, stage the text and weight files in the model's directory, compile, load, then create
// the kernel's first binding: one surface per input and output and the request over them (newBinding).
// Whatever was created is released again when a later step fails.
func compile(drv driver, p *mil.Program, w mil.Weights) (_ *Kernel, err error) {
	n := compiles.Add(1)
	if p == nil {
		return nil, fmt.Errorf("ane compile: nil program")
	}
	if err := mil.Check(p); err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	inputs, outputs, err := ioSpecs(p)
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	files, err := weightFiles(w)
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	if err := checkBlobRefs(p, w); err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	if err := mil.CheckWeights(p, w); err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	text := []byte(mil.Print(p))

	// Undo, in reverse order, what has been set up, if a step fails.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()

	m, err := drv.newModel(text, files)
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	undo = append(undo, m.release)

	dir, err := modelDir(drv.tempDir(), m.hexID())
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	stagedDirs.acquire(dir)
	undo = append(undo, func() { stagedDirs.release(dir) })
	if err := stageModel(dir, text, files); err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}

	if err := m.compile(); err != nil {
		return nil, fmt.Errorf("ane compile: %w%s", err, budgetHint(n))
	}
	if err := m.load(); err != nil {
		return nil, fmt.Errorf("ane load: %w%s", err, budgetHint(n))
	}
	undo = append(undo, func() { m.unload() })

	first, err := newBinding(drv, m, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	k := &Kernel{Binding: *first, drv: drv, m: m, inSpecs: inputs, outSpecs: outputs, dir: dir}
	k.Binding.k = k
	return k, nil
}

// errNoDriver is what Compile returns on a Backend that was not opened through Open.
var errNoDriver = errors.New("ane compile: backend was not opened with private.Open")
