package private

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/anestar/anestar/ane"
)

// errClosed is returned by Eval after Close; it wraps ane.ErrClosed.
var errClosed = fmt.Errorf("ane eval: %w", ane.ErrClosed)

// Kernel is a program compiled and loaded on the ANE. Its own IOSurfaces, one per input and output of
// main, and the request over them are its first Binding; Bind makes more requests over the same
// loaded model.
type Kernel struct {
	Binding // the kernel's own surfaces and request; its closed flag is the kernel's

	mu       sync.Mutex // serialises Eval, Bind and Close of the kernel and all its bindings
	drv      driver     // makes the surfaces of new bindings
	m        model      // the loaded model
	inSpecs  []ioSpec   // main's inputs, in declaration order
	outSpecs []ioSpec   // main's outputs, in return order
	ports    portMap    // how main's inputs and outputs map onto the loaded model's ports
	dir      string     // staging directory, shared through stagedDirs
	binds    []*Binding // the open bindings made by Bind
}

// Binding is one set of a kernel's IOSurfaces with its own _ANERequest over the kernel's loaded model,
// built when the binding is made, so that Eval looks nothing up and creates nothing.
//
// The Evals of one kernel's bindings take turns under the kernel's lock: evaluateWithQoS on one model
// from several threads at once is not something the reference does, and the ANE runs one request at a
// time anyway.
type Binding struct {
	k       *Kernel          // the kernel whose model it evaluates
	inputs  []*ane.Surface   // main's inputs, in declaration order
	outputs []*ane.Surface   // main's outputs, in return order
	req     request          // the prepared request over mems; nil until made
	mems    []*surfaceMemory // inputs then outputs
	closed  bool             // Close has run (for the first binding: the kernel's Close)
}

var (
	_ ane.Kernel  = (*Kernel)(nil)
	_ ane.Binding = (*Binding)(nil)
)

// newBinding creates one IOSurface per input and per output spec and the request that evaluates the
// loaded model m on them, passing each surface at the port of its name (ports): the kernel's first
// binding at compile, every later one at Bind. On failure it releases what it made.
func newBinding(drv driver, m model, inputs, outputs []ioSpec, ports portMap) (_ *Binding, err error) {
	b := &Binding{}
	defer func() {
		if err != nil {
			b.release()
		}
	}()
	var ins, outs []surface
	for i, spec := range append(append([]ioSpec(nil), inputs...), outputs...) {
		s, err := drv.newSurface(spec.bytes)
		if err != nil {
			return nil, fmt.Errorf("surface %q: %w", spec.name, err)
		}
		mem := &surfaceMemory{name: spec.name, s: s}
		b.mems = append(b.mems, mem)
		sf, err := ane.NewSurface(spec.name, spec.typ, mem)
		if err != nil {
			return nil, err
		}
		if i < len(inputs) {
			ins = append(ins, s)
			b.inputs = append(b.inputs, sf)
		} else {
			outs = append(outs, s)
			b.outputs = append(b.outputs, sf)
		}
	}
	if b.req, err = ports.request(m, ins, outs); err != nil {
		return nil, err
	}
	return b, nil
}

// release marks b closed and releases its request and surfaces. The caller holds b.k.mu (or owns b).
func (b *Binding) release() {
	b.closed = true
	if b.req != nil {
		b.req.release()
		b.req = nil
	}
	for _, m := range b.mems {
		m.release()
	}
	b.mems = nil
}

// Inputs are the surfaces of main's inputs, in declaration order.
func (b *Binding) Inputs() []*ane.Surface { return b.inputs }

// Outputs are the surfaces of main's outputs, in return order.
func (b *Binding) Outputs() []*ane.Surface { return b.outputs }

// Eval runs the program once on the ANE. It reads the binding's input surfaces and writes its output
// surfaces. The request and selectors were prepared when the binding was made, so Eval looks nothing up
// and uses no reflection. The ANE call itself cannot be interrupted: ctx is checked before it starts.
func (b *Binding) Eval(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ane eval: %w", err)
	}
	k := b.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.closed || k.closed {
		return errClosed
	}
	if err := b.req.eval(); err != nil {
		return fmt.Errorf("ane eval: %w", err)
	}
	return nil
}

// Close releases the binding's request and surfaces; the kernel and its other bindings are untouched.
// Closing the kernel's own first binding closes the kernel. A second Close does nothing.
func (b *Binding) Close() error {
	k := b.k
	if b == &k.Binding {
		return k.Close()
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.closed {
		return nil
	}
	k.binds = slices.DeleteFunc(k.binds, func(o *Binding) bool { return o == b })
	b.release()
	return nil
}

// Bind makes a new binding: IOSurfaces of the program's input and output sizes and a request over the
// loaded model. Nothing is compiled or loaded, and the compile count does not move.
func (k *Kernel) Bind() (ane.Binding, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, fmt.Errorf("ane bind: %w", ane.ErrClosed)
	}
	b, err := newBinding(k.drv, k.m, k.inSpecs, k.outSpecs, k.ports)
	if err != nil {
		return nil, fmt.Errorf("ane bind: %w", err)
	}
	b.k = k
	k.binds = append(k.binds, b)
	return b, nil
}

// Close releases every binding's request and surfaces, unloads and releases the model, and removes the
// staging directory when no other kernel uses it. Later calls to Eval fail; a second Close does nothing.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	for _, b := range k.binds {
		b.release()
	}
	k.binds = nil
	k.Binding.release()
	var errs []error
	if err := k.m.unload(); err != nil {
		errs = append(errs, fmt.Errorf("ane close: %w", err))
	}
	k.m.release()
	if err := stagedDirs.release(k.dir); err != nil {
		errs = append(errs, fmt.Errorf("ane close: %w", err))
	}
	return errors.Join(errs...)
}

// Input is the surface of the input called name.
func (b *Binding) Input(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(b.inputs, name, "input")
}

// Output is the surface of the output called name.
func (b *Binding) Output(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(b.outputs, name, "output")
}
