package ane

import (
	"context"
	"fmt"

	"github.com/anestar/anestar/mil"
)

// CompilePacked is how a backend compiles a program under the single-I/O rule: it packs p (Pack),
// compiles the packed program with compile, and returns a kernel whose Input and Output give the
// declared parts as views of the packed surfaces. A program with one input and one output is compiled
// as it is.
func CompilePacked(p *mil.Program, w mil.Weights, compile func(*mil.Program, mil.Weights) (Kernel, error)) (Kernel, error) {
	return CompilePackedOn(p, w, DefaultChip(), compile)
}

// CompilePackedOn is CompilePacked with the packing within chip's caps.
func CompilePackedOn(p *mil.Program, w mil.Weights, chip Chip, compile func(*mil.Program, mil.Weights) (Kernel, error)) (Kernel, error) {
	pp, pw, l, err := PackOn(p, w, chip)
	if err != nil {
		if ierr := EligibleOn(p, chip).Err(); ierr != nil {
			return nil, ierr // the declared ports break a rule already: say which, where
		}
		return nil, err
	}
	k, err := compile(pp, pw)
	if err != nil || l == nil {
		return k, err
	}
	pk := &packedKernel{packedBinding: packedBinding{layout: l}, k: k}
	if err := pk.views(k); err != nil {
		k.Close()
		return nil, err
	}
	return pk, nil
}

// WithLayout wraps kernel k, compiled from a program packed with layout l, so that its Input and Output
// give the parts. A nil l returns k.
func WithLayout(k Kernel, l *Layout) (Kernel, error) {
	if l == nil {
		return k, nil
	}
	pk := &packedKernel{packedBinding: packedBinding{layout: l}, k: k}
	if err := pk.views(k); err != nil {
		return nil, err
	}
	return pk, nil
}

// SurfaceNamed returns the surface called name among ss, the inputs or outputs (kind) of a binding.
func SurfaceNamed(ss []*Surface, name, kind string) (*Surface, error) {
	for _, s := range ss {
		if s.Name() == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range ss {
		names = append(names, s.Name())
	}
	return nil, fmt.Errorf("no %s called %q (the program's %ss: %v)", kind, name, kind, names)
}

// packedBinding is a binding of a packed program with views of its parts.
type packedBinding struct {
	Binding
	layout    *Layout
	ins, outs map[string]*Surface
}

// views makes the part views of b's packed surfaces.
func (pb *packedBinding) views(b Binding) error {
	pb.Binding = b
	pb.ins, pb.outs = map[string]*Surface{}, map[string]*Surface{}
	for _, side := range []struct {
		port  Port
		surfs []*Surface
		into  map[string]*Surface
	}{{pb.layout.In, b.Inputs(), pb.ins}, {pb.layout.Out, b.Outputs(), pb.outs}} {
		if len(side.surfs) != 1 {
			return fmt.Errorf("packed kernel has %d surfaces for %s, want 1", len(side.surfs), side.port.Name)
		}
		s := side.surfs[0]
		for _, pt := range side.port.Parts {
			if side.port.Name == pt.Name { // the port as declared
				side.into[pt.Name] = s
				continue
			}
			v, err := NewView(s, pt.Name, pt.Type.Shape, pt.Channel, pt.Column)
			if pt.Flat > 0 {
				v, err = NewFlatView(s, pt.Name, pt.Type.Shape, 0, pt.Column, s.Channels(), pt.Flat)
			}
			if err != nil {
				return err
			}
			side.into[pt.Name] = v
		}
	}
	return nil
}

// Input is the view of the declared input called name.
func (pb *packedBinding) Input(name string) (*Surface, error) {
	return pb.part(pb.ins, pb.layout.In, name, "input")
}

// Output is the view of the declared output called name.
func (pb *packedBinding) Output(name string) (*Surface, error) {
	return pb.part(pb.outs, pb.layout.Out, name, "output")
}

func (pb *packedBinding) part(m map[string]*Surface, port Port, name, kind string) (*Surface, error) {
	if s := m[name]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("no %s called %q (the program's %ss: %s)", kind, name, kind, partNames(port))
}

// Layout is how the binding's program was packed.
func (pb *packedBinding) Layout() *Layout { return pb.layout }

// packedKernel is a kernel of a packed program.
type packedKernel struct {
	packedBinding
	k Kernel
}

// Bind makes a new binding of the packed program, with views of its own.
func (pk *packedKernel) Bind() (Binding, error) {
	b, err := pk.k.Bind()
	if err != nil {
		return nil, err
	}
	nb := &packedBinding{layout: pk.layout}
	if err := nb.views(b); err != nil {
		b.Close()
		return nil, err
	}
	return nb, nil
}

// Eval runs the kernel's own binding.
func (pk *packedKernel) Eval(ctx context.Context) error { return pk.k.Eval(ctx) }

// Close closes the kernel and its bindings.
func (pk *packedKernel) Close() error { return pk.k.Close() }

// Layouter is implemented by the bindings of packed programs.
type Layouter interface {
	Layout() *Layout
}
