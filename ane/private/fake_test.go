package private

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/anestar/anestar/mil"
)

// isolateCount restores the process's compile count when t ends, so that compiles through fake drivers
// do not inflate the count the real backend reports in the same test process on a Mac.
func isolateCount(t *testing.T) {
	n := compiles.Load()
	t.Cleanup(func() { compiles.Store(n) })
}

// fakeDriver records the calls the compile sequence makes and fails on request.
type fakeDriver struct {
	tmp string // staging root
	hex string // identifier every model gets

	errNewModel, errCompile, errLoad, errRequest, errEval, errUnload error
	failSurface                                                      int                                     // index of the surface to fail, or -1
	failLoads                                                        int                                     // number of loads that fail before one succeeds
	reorder                                                          bool                                    // list the ports in reverse order
	editPorts                                                        func(ins, outs []port) ([]port, []port) // changes the ports reported, when set
	errPorts                                                         error

	mu       sync.Mutex
	log      []string       // calls in order
	models   []*fakeModel   // every model made
	surfaces []*fakeSurface // every surface made
	staged   string         // model.mil as found on disk when compile ran
	requests []*fakeRequest // every request made
}

func newFakeDriver(tmp string) *fakeDriver {
	return &fakeDriver{tmp: tmp, hex: "0123abcd_fake", failSurface: -1}
}

func (d *fakeDriver) record(format string, args ...any) {
	d.mu.Lock()
	d.log = append(d.log, fmt.Sprintf(format, args...))
	d.mu.Unlock()
}

func (d *fakeDriver) tempDir() string { return d.tmp }

func (d *fakeDriver) newModel(milText []byte, files []weightFile) (model, error) {
	d.record("newModel %d files", len(files))
	if d.errNewModel != nil {
		return nil, d.errNewModel
	}
	m := &fakeModel{d: d, text: string(milText)}
	d.models = append(d.models, m)
	return m, nil
}

func (d *fakeDriver) newSurface(n int) (surface, error) {
	i := len(d.surfaces)
	d.record("surface %d bytes", n)
	if i == d.failSurface {
		return nil, fmt.Errorf("no memory")
	}
	s := &fakeSurface{buf: make([]byte, n)}
	d.surfaces = append(d.surfaces, s)
	return s, nil
}

type fakeModel struct {
	d        *fakeDriver
	text     string
	loaded   bool
	released bool
}

func (m *fakeModel) hexID() string { return m.d.hex }

func (m *fakeModel) compile() error {
	m.d.record("compile")
	b, err := os.ReadFile(filepath.Join(m.d.tmp, m.d.hex, milFileName))
	if err != nil {
		return fmt.Errorf("fake compile: %v", err)
	}
	m.d.staged = string(b)
	return m.d.errCompile
}

func (m *fakeModel) load() error {
	m.d.record("load")
	if m.d.errLoad != nil {
		return m.d.errLoad
	}
	if m.d.failLoads > 0 {
		m.d.failLoads--
		return fmt.Errorf("fake load: ANE slot busy")
	}
	m.loaded = true
	return nil
}

// ports lists the ports of the program the model was made from, as the framework would.
func (m *fakeModel) ports() ([]port, []port, error) {
	m.d.record("ports")
	if m.d.errPorts != nil {
		return nil, nil, m.d.errPorts
	}
	p, err := mil.Parse("model.mil", []byte(m.text))
	if err != nil {
		return nil, nil, err
	}
	ins, outs := programPorts(p, m.d.reorder)
	if m.d.editPorts != nil {
		ins, outs = m.d.editPorts(ins, outs)
	}
	return ins, outs, nil
}

func (m *fakeModel) newRequest(inputs, outputs []surface) (request, error) {
	m.d.record("newRequest %d in %d out", len(inputs), len(outputs))
	if m.d.errRequest != nil {
		return nil, m.d.errRequest
	}
	r := &fakeRequest{d: m.d}
	m.d.requests = append(m.d.requests, r)
	for _, s := range inputs {
		r.in = append(r.in, s.(*fakeSurface))
	}
	for _, s := range outputs {
		r.out = append(r.out, s.(*fakeSurface))
	}
	return r, nil
}

func (m *fakeModel) unload() error {
	m.d.record("unload")
	m.loaded = false
	return m.d.errUnload
}

func (m *fakeModel) release() {
	m.d.record("release model")
	m.released = true
}

// fakeRequest "evaluates" by writing, into every output, the bytes of the first input plus one.
type fakeRequest struct {
	d       *fakeDriver
	in, out []*fakeSurface
	evals   int
}

func (r *fakeRequest) eval() error {
	r.evals++
	if r.d.errEval != nil {
		return r.d.errEval
	}
	for _, o := range r.out {
		for i := range o.buf {
			if len(r.in) > 0 && i < len(r.in[0].buf) {
				o.buf[i] = r.in[0].buf[i] + 1
			}
		}
	}
	return nil
}

func (r *fakeRequest) release() { r.d.record("release request") }

// fakeSurface is a plain buffer that remembers its lock state.
type fakeSurface struct {
	buf     []byte
	locks   []string // "lock ro", "unlock rw", ...
	locked  int
	freed   bool
	errLock error
}

func mode(readOnly bool) string {
	if readOnly {
		return "ro"
	}
	return "rw"
}

func (s *fakeSurface) lock(readOnly bool) error {
	if s.freed {
		panic("lock of a freed surface")
	}
	s.locks = append(s.locks, "lock "+mode(readOnly))
	if s.errLock != nil {
		return s.errLock
	}
	s.locked++
	return nil
}

func (s *fakeSurface) unlock(readOnly bool) error {
	if s.freed {
		panic("unlock of a freed surface")
	}
	s.locks = append(s.locks, "unlock "+mode(readOnly))
	s.locked--
	return nil
}

func (s *fakeSurface) bytes() []byte { return s.buf }

func (s *fakeSurface) free() {
	if s.freed {
		panic("double free")
	}
	s.freed = true
}
