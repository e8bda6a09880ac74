package emulator

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Bindings. A kernel's compiled plan (its steps over planned buffers) reads its inputs from tensors
// that are filled at the start of each Eval and leaves its outputs in tensors that are copied out at
// the end, so any set of surfaces of the program's types can be evaluated with it: a Binding is just
// those surfaces and the transfers between them and the plan's tensors. Its Eval is the kernel's, on
// its own surfaces; bindings add surface memory only, never weights or scratch. A plan that reads its
// inputs in place (FP32 numerics, alias.go) reads the kernel's own surfaces, so each binding of it gets
// a plan of its own, compiled at Bind: its steps are its own, its constants the kernel's and its
// scratch the backend's shared buffers.
//
// The Evals of all bindings take turns, under the kernel's lock and then the backend's arena lock,
// because they share the plan's buffers with each other and with the backend's other kernels
// (scratch.go). Scratch of its own per binding would let two run at once, but it would multiply the
// scratch by the number of bindings (twelve layers, twelve times), which is what bindings exist to
// avoid; and each Eval already spreads its ops over every core, so evals side by side would gain
// little.

// Binding is one set of a kernel's surfaces. The kernel's own surfaces are its first binding
// (embedded in Kernel); Kernel.Bind makes more.
type Binding struct {
	k         *Kernel           // the kernel whose plan it runs
	ins, outs []*ane.Surface    // one per main input, one per main output
	inX, outX []*transfer       // read ins into the plan's inputs; write its outputs (or their parts) to outs
	plan      *Kernel           // the plan it runs when it has one of its own (alias.go); nil: k's
	mems      []*ane.HeapMemory // the memory of its surfaces
	evals     int               // Eval calls so far
	closed    bool              // Close was called (for the first binding: the kernel was closed)
}

var (
	_ ane.Kernel  = (*Kernel)(nil)
	_ ane.Binding = (*Binding)(nil)
)

// Inputs are the input surfaces, in main's parameter order.
func (b *Binding) Inputs() []*ane.Surface { return b.ins }

// Outputs are the output surfaces, in main's return order.
func (b *Binding) Outputs() []*ane.Surface { return b.outs }

// Evals is the number of Eval calls on this binding so far.
func (b *Binding) Evals() int {
	b.k.mu.Lock()
	defer b.k.mu.Unlock()
	return b.evals
}

// Eval reads the binding's input surfaces, runs every op of the kernel and writes the binding's
// output surfaces. It checks ctx between ops. The Evals of one backend's kernels and bindings take
// turns: they share their scratch buffers.
func (b *Binding) Eval(ctx context.Context) error {
	k := b.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if b.closed || k.closed {
		return fmt.Errorf("emulator: eval: %w", ane.ErrClosed)
	}
	k.ar.mu.Lock()
	defer k.ar.mu.Unlock()
	k.ar.rec.evaluating()
	b.evals++
	p := b.plan
	if p == nil {
		p = k
	}
	var t0 time.Time
	if p.times != nil {
		t0 = time.Now()
	}
	for _, x := range b.inX {
		if err := x.run(); err != nil {
			return fmt.Errorf("emulator: eval %d: %w", b.evals, err)
		}
	}
	if p.times != nil {
		p.times.in.add(time.Since(t0))
	}
	if err := p.run(ctx, b.evals); err != nil {
		return err
	}
	if p.times != nil {
		t0 = time.Now()
	}
	for _, x := range b.outX {
		if err := x.run(); err != nil {
			return fmt.Errorf("emulator: eval %d: %w", b.evals, err)
		}
	}
	if p.times != nil {
		p.times.out.add(time.Since(t0))
	}
	return nil
}

// Close releases the binding's surfaces (their memory goes to the backend's recycler): later Evals,
// and accesses to its surfaces, fail with ErrClosed. The kernel and its other bindings are untouched.
// Closing the kernel's own first binding closes the kernel. Closing twice is harmless.
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
	k.ar.mu.Lock()
	defer k.ar.mu.Unlock()
	k.ar.rec.give(nil, b.release())
	return nil
}

// release marks b closed, releases its surfaces' memory and its own plan's buffers, and returns the
// bytes that can be reused. The caller holds b.k.mu and b.k.ar.mu.
func (b *Binding) release() [][]byte {
	b.closed = true
	var bytes [][]byte
	for _, m := range b.mems {
		if buf := m.Release(); buf != nil {
			bytes = append(bytes, buf)
		}
	}
	if p := b.plan; p != nil {
		b.k.ar.rec.give(p.owned, nil)
		b.k.ar.release(p.scratch)
		p.steps, p.owned, p.scratch = nil, nil, nil
	}
	b.inX, b.outX, b.mems, b.plan = nil, nil, nil, nil
	return bytes
}

// Bind returns a new binding of the kernel: zeroed surfaces of the types of its inputs and outputs
// (on recycled memory) and their transfers to and from the compiled plan. When the kernel's plan reads
// its inputs in place (alias.go), the binding gets a plan of its own, compiled for its surfaces with
// the kernel's constants; otherwise nothing is compiled.
func (k *Kernel) Bind() (ane.Binding, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, fmt.Errorf("emulator: bind: %w", ane.ErrClosed)
	}
	k.ar.mu.Lock()
	defer k.ar.mu.Unlock()
	b := &Binding{k: k}
	fail := func(err error) (ane.Binding, error) {
		k.ar.rec.give(nil, b.release())
		return nil, fmt.Errorf("emulator: bind: %w", err)
	}
	for _, s := range k.ins {
		ns, err := b.newSurface(k.ar.rec, s.Name(), s.Type())
		if err != nil {
			return fail(fmt.Errorf("input %s: %w", s.Name(), err))
		}
		b.ins = append(b.ins, ns)
	}
	for _, s := range k.outs {
		ns, err := b.newSurface(k.ar.rec, s.Name(), s.Type())
		if err != nil {
			return fail(fmt.Errorf("output %s: %w", s.Name(), err))
		}
		b.outs = append(b.outs, ns)
	}
	if k.inPlace {
		p, err := compilePlan(k.fn, k.w, k.opts, k.fuse, k.ar, &given{ins: b.ins, outs: b.outs, consts: k.consts})
		k.ar.rec.compiled()
		if err != nil {
			return fail(err)
		}
		b.plan, b.inX, b.outX = p, p.inX, p.outX
	} else {
		for i, s := range b.ins {
			b.inX = append(b.inX, k.inputTransfer(i, s))
		}
		for i, s := range b.outs {
			b.outX = append(b.outX, newTransfer(s, k.outSegs[i], false))
		}
	}
	k.binds = append(k.binds, b)
	return b, nil
}

// newSurface makes a zeroed surface of type t for the binding, on memory from rec.
func (b *Binding) newSurface(rec *recycler, name string, t mil.Type) (*ane.Surface, error) {
	s, mem, err := rec.newSurface(name, t)
	if err != nil {
		return nil, err
	}
	b.mems = append(b.mems, mem)
	return s, nil
}

// Input is the surface of the input called name.
func (b *Binding) Input(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(b.ins, name, "input")
}

// Output is the surface of the output called name.
func (b *Binding) Output(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(b.outs, name, "output")
}
