package private

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// compile turns p into a loaded kernel through drv. It first type-checks p and its weights (mil.Check,
// mil.CheckWeights), refuses it when it breaks a rule the hardware is known to have (ane.Eligible), and
// sizes its surfaces, so that a bad program fails with a message naming the place
// before anything reaches the framework. Every call counts as a compile, as on every backend: the count
// can only overestimate what the framework has compiled, which errs on the safe side of its limit. Then
// it follows the reference's sequence: build the in-memory model from the MIL text (with the reference
// buildInfo when the program has none) and weights, stage the text and weight files in the model's
// directory, compile, load (once more after 100 ms if the first load fails, as maderix/ANE
// bridge/ane_bridge.m does), read the loaded model's ports and bind them to the program's inputs and
// outputs by name (ports.go), then create the kernel's first binding: one surface per input and output
// and the request over them, in the ports' order (newBinding). Whatever was created is released again
// when a later step fails.
func compile(drv driver, p *mil.Program, w mil.Weights, chip ane.Chip) (_ *Kernel, err error) {
	n := compiles.Add(1)
	if p == nil {
		return nil, fmt.Errorf("ane compile: nil program")
	}
	if err := mil.Check(p); err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	if err := ane.EligibleOn(p, chip).Err(); err != nil {
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
	text := []byte(mil.Print(mil.WithBuildInfo(p)))

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
	if err := load(m); err != nil {
		return nil, fmt.Errorf("ane load: %w%s", err, budgetHint(n))
	}
	undo = append(undo, func() { m.unload() })

	ports, err := readPorts(m, inputs, outputs)
	if err != nil {
		return nil, fmt.Errorf("ane load: %w", err)
	}
	for _, w := range ports.warnings {
		fmt.Fprintf(warnOut, "anestar: warning: ane load: %s\n", w)
	}
	first, err := newBinding(drv, m, inputs, outputs, ports)
	if err != nil {
		return nil, fmt.Errorf("ane compile: %w", err)
	}
	k := &Kernel{Binding: *first, drv: drv, m: m, inSpecs: inputs, outSpecs: outputs, ports: ports, dir: dir}
	k.Binding.k = k
	return k, nil
}

// warnOut receives the warnings of a compile that went on (a port the model describes otherwise than
// the program): standard error; tests capture it.
var warnOut io.Writer = os.Stderr

// loadRetryDelay is how long load waits before its one retry: maderix/ANE bridge/ane_bridge.m retries
// loadWithQoS: once after 100 ms, for the ANE to reclaim a slot.
var loadRetryDelay = 100 * time.Millisecond

// load loads m, once more after loadRetryDelay if the first attempt fails.
func load(m model) error {
	err := m.load()
	if err == nil {
		return nil
	}
	time.Sleep(loadRetryDelay)
	if err2 := m.load(); err2 != nil {
		return fmt.Errorf("%w (and again after %v)", err2, loadRetryDelay)
	}
	return nil
}

// errNoDriver is what Compile returns on a Backend that was not opened through Open.
var errNoDriver = errors.New("ane compile: backend was not opened with private.Open")
