package private

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/anetest"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/mil"
)

// emuDriver stands in for AppleNeuralEngine.framework with the emulator, the way the framework works:
// compile reads the staged model.mil and weight files back from the model directory, and eval copies
// the request's surfaces in and out by index. Running the conformance suite over it checks everything
// the backend does in Go — type checks, printing, staging, surface sizes and order, locking, the
// kernel's life cycle — leaving only the Objective-C calls untested off a Mac.
type emuDriver struct {
	tmp string
}

func (d *emuDriver) tempDir() string { return d.tmp }

// newModel names the model by a hash of its text and weights, so that identical programs share a
// directory, as they do with the framework's hexStringIdentifier.
func (d *emuDriver) newModel(milText []byte, files []weightFile) (model, error) {
	h := fnv.New64a()
	h.Write(milText)
	var keys []string
	for _, f := range files {
		fmt.Fprintf(h, "\x00%s\x00", f.key)
		h.Write(f.data)
		keys = append(keys, f.key)
	}
	return &emuModel{hex: fmt.Sprintf("%016X", h.Sum64()), keys: keys, d: d}, nil
}

func (d *emuDriver) newSurface(n int) (surface, error) {
	return &fakeSurface{buf: make([]byte, n)}, nil
}

type emuModel struct {
	d    *emuDriver
	hex  string
	keys []string   // weight file keys, as given to the descriptor
	k    ane.Kernel // the emulator's kernel, after compile
}

func (m *emuModel) hexID() string { return m.hex }

// compile reads the program back from the staged directory, as the ANE compiler does.
func (m *emuModel) compile() error {
	dir := filepath.Join(m.d.tmp, m.hex)
	text, err := os.ReadFile(filepath.Join(dir, milFileName))
	if err != nil {
		return err
	}
	p, err := mil.Parse(milFileName, text)
	if err != nil {
		return fmt.Errorf("staged MIL does not parse: %v", err)
	}
	w := mil.Weights{}
	for _, key := range m.keys {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(key, modelPathPrefix))))
		if err != nil {
			return err
		}
		w[key] = b
	}
	m.k, err = emulator.New(emulator.Options{}).Compile(p, w)
	return err
}

func (m *emuModel) load() error { return nil }

// ports lists the emulator kernel's inputs and outputs in reverse order: the framework does not keep
// the program's order, and a backend that bound by position would fail the conformance suite here.
func (m *emuModel) ports() (ins, outs []port, err error) {
	for _, s := range reversed(m.k.Inputs()) {
		ins = append(ins, portOf(s.Name(), s.Type(), false))
	}
	for _, s := range reversed(m.k.Outputs()) {
		outs = append(outs, portOf(s.Name(), s.Type(), true))
	}
	return ins, outs, nil
}

func reversed[T any](xs []T) []T {
	out := slices.Clone(xs)
	slices.Reverse(out)
	return out
}

func (m *emuModel) newRequest(inputs, outputs []surface) (request, error) {
	if len(inputs) != len(m.k.Inputs()) || len(outputs) != len(m.k.Outputs()) {
		return nil, fmt.Errorf("request has %d inputs and %d outputs, the model %d and %d",
			len(inputs), len(outputs), len(m.k.Inputs()), len(m.k.Outputs()))
	}
	return &emuRequest{m: m, in: inputs, out: outputs}, nil
}

func (m *emuModel) unload() error { return m.k.Close() }
func (m *emuModel) release()      {}

type emuRequest struct {
	m       *emuModel
	in, out []surface
}

// eval copies the request's input surfaces into the emulator kernel's, runs it, and copies its outputs
// back, port by port in the order ports reports them, checking that the sizes agree.
func (r *emuRequest) eval() error {
	if err := copySurfaces(r.in, reversed(r.m.k.Inputs()), true); err != nil {
		return err
	}
	if err := r.m.k.Eval(context.Background()); err != nil {
		return err
	}
	return copySurfaces(r.out, reversed(r.m.k.Outputs()), false)
}

func (r *emuRequest) release() {}

// copySurfaces copies between the backend's surfaces and the emulator's, in whichever direction.
func copySurfaces(ours []surface, theirs []*ane.Surface, in bool) error {
	for i, s := range theirs {
		m := s.Memory()
		if err := m.Lock(!in); err != nil {
			return err
		}
		if len(m.Bytes()) != len(ours[i].bytes()) {
			m.Unlock(!in)
			return fmt.Errorf("surface %d: %d bytes, the model's %s has %d", i, len(ours[i].bytes()), s.Name(), len(m.Bytes()))
		}
		if in {
			copy(m.Bytes(), ours[i].bytes())
		} else {
			copy(ours[i].bytes(), m.Bytes())
		}
		if err := m.Unlock(!in); err != nil {
			return err
		}
	}
	return nil
}

// TestConformanceOverEmulator runs the conformance suite on the backend with the emulator standing in
// for the framework.
func TestConformanceOverEmulator(t *testing.T) {
	isolateCount(t)
	anetest.Run(t, &Backend{drv: &emuDriver{tmp: t.TempDir()}})
}
