package emulator

import (
	"context"
	"errors"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// closedTestProgram has inputs a [1,8,1,32] fp32 and b, c [1,4,1,16] fp16 and outputs y [1,8,1,32] fp32
// and z [1,4,1,16] fp16: strict mode packs them into one port each way, a flattened into the packed
// input's columns, so that Input and Output give views, flat ones among them.
func closedTestProgram(t *testing.T) (*mil.Program, mil.Weights) {
	t.Helper()
	b := mil.NewBuilder()
	a := b.Cast("ah", b.Input("a", mil.Tensor(mil.FP32, 1, 8, 1, 32)), "fp16")
	x := b.Input("b", mil.Tensor(mil.FP16, 1, 4, 1, 16))
	c := b.Input("c", mil.Tensor(mil.FP16, 1, 4, 1, 16))
	w := make([]float32, 8*8)
	for i := range w {
		w[i] = float32(i%9) / 8
	}
	y := b.Conv("yc", a, b.Weight("w", mil.FP16, []int{8, 8, 1, 1}, w), nil)
	b.Output(b.Cast("y", y, "fp32"), b.Mul("z", x, c))
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p, ws
}

// TestErrClosedEveryPath: once a kernel or binding is closed, every way into it — Eval, Bind, and each
// access to its surfaces (the ports, the parts Input and Output give, copies to and from them) — fails
// with an error in which errors.Is finds ane.ErrClosed, in relaxed and strict (packed) mode, in both
// numerics (FP32 reads its inputs in place, each binding with a plan of its own).
func TestErrClosedEveryPath(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts Options
	}{
		{"relaxed/FP16", Options{Relaxed: true}},
		{"relaxed/FP32", Options{Relaxed: true, Numerics: FP32}},
		{"strict/FP16", Options{}},
		{"strict/FP32", Options{Numerics: FP32}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			p, w := closedTestProgram(t)
			compile := func() ane.Kernel {
				k, err := New(mode.opts).Compile(p, w)
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Eval(context.Background()); err != nil {
					t.Fatal(err)
				}
				if a, err := k.Input("a"); err != nil || (a.Parent() == nil) != mode.opts.Relaxed {
					t.Fatalf("input a: %v; a part of a packed input: %v, want %v", err, err == nil && a.Parent() != nil, !mode.opts.Relaxed)
				}
				return k
			}
			t.Run("KernelClosed", func(t *testing.T) {
				k := compile()
				bd, err := k.Bind()
				if err != nil {
					t.Fatal(err)
				}
				if err := k.Close(); err != nil {
					t.Fatal(err)
				}
				wantClosed(t, "Bind", func() error { _, err := k.Bind(); return err })
				closedPaths(t, "kernel", k)
				closedPaths(t, "binding of the closed kernel", bd)
				wantClosed(t, "binding Close after the kernel's", func() error {
					if err := bd.Close(); err != nil {
						return err
					}
					return bd.Eval(context.Background())
				})
			})
			t.Run("BindingClosed", func(t *testing.T) {
				k := compile()
				defer k.Close()
				bd, err := k.Bind()
				if err != nil {
					t.Fatal(err)
				}
				if err := bd.Close(); err != nil {
					t.Fatal(err)
				}
				closedPaths(t, "binding", bd)
				if err := k.Eval(context.Background()); err != nil {
					t.Errorf("the kernel's Eval after closing a binding: %v", err)
				}
			})
		})
	}
}

// closedPaths checks every way into b, which is closed.
func closedPaths(t *testing.T, what string, b ane.Binding) {
	t.Helper()
	wantClosed(t, what+" Eval", func() error { return b.Eval(context.Background()) })
	var surfs []*ane.Surface
	surfs = append(surfs, b.Inputs()...)
	surfs = append(surfs, b.Outputs()...)
	for _, name := range []string{"a", "b", "c"} {
		s, err := b.Input(name)
		if err != nil {
			t.Fatalf("%s: Input(%q): %v", what, name, err)
		}
		surfs = append(surfs, s)
	}
	for _, name := range []string{"y", "z"} {
		s, err := b.Output(name)
		if err != nil {
			t.Fatalf("%s: Output(%q): %v", what, name, err)
		}
		surfs = append(surfs, s)
	}
	for _, s := range surfs {
		closedSurface(t, what+" surface "+s.Name(), s)
	}
}

// closedSurface checks every access to s, a surface of a closed binding.
func closedSurface(t *testing.T, what string, s *ane.Surface) {
	t.Helper()
	ch, sp := s.Channels(), s.Spatial()
	vals := make([]float32, ch*sp)
	open, err := ane.NewHeapSurface("open", s.Type())
	if err != nil {
		t.Fatal(err)
	}
	wantClosed(t, what+" WriteChannels", func() error { return s.WriteChannels(0, ch, vals) })
	wantClosed(t, what+" ReadChannels", func() error { return s.ReadChannels(0, ch, vals) })
	wantClosed(t, what+" WriteRegion", func() error { return s.WriteRegion(0, ch, 0, sp, vals, false) })
	wantClosed(t, what+" WriteRegion transposed", func() error { return s.WriteRegion(0, ch, 0, sp, vals, true) })
	wantClosed(t, what+" ReadRegion", func() error { return s.ReadRegion(0, ch, 0, sp, vals) })
	wantClosed(t, what+" Fill", func() error { return s.Fill(1) })
	wantClosed(t, what+" CopyChannels into it", func() error { return s.CopyChannels(0, open, 0, ch) })
	wantClosed(t, what+" CopyChannels from it", func() error { return open.CopyChannels(0, s, 0, ch) })
	wantClosed(t, what+" CopyChannels onto itself", func() error { return s.CopyChannels(0, s, 0, ch) })
	wantClosed(t, what+" CopyRegion into it", func() error { return s.CopyRegion(0, 0, open, 0, 0, ch, sp) })
	wantClosed(t, what+" CopyRegion from it", func() error { return open.CopyRegion(0, 0, s, 0, 0, ch, sp) })
	wantClosed(t, what+" CopyReshaped into it", func() error { return s.CopyReshaped(0, 0, ch, open, 0, ch) })
	wantClosed(t, what+" CopyReshaped from it", func() error { return open.CopyReshaped(0, 0, ch, s, 0, ch) })
	if s.Parent() != nil {
		return // a part has no bytes of its own
	}
	buf := make([]byte, s.Bytes())
	wantClosed(t, what+" WriteBytes", func() error { return s.WriteBytes(0, buf) })
	wantClosed(t, what+" ReadBytes", func() error { return s.ReadBytes(0, buf) })
	wantClosed(t, what+" Access", func() error { return s.Access(true, func([]byte) error { return nil }) })
}

// wantClosed reports an error unless f fails with an error wrapping ane.ErrClosed.
func wantClosed(t *testing.T, what string, f func() error) {
	t.Helper()
	if err := f(); !errors.Is(err, ane.ErrClosed) {
		t.Errorf("%s: %v, want an error wrapping ane.ErrClosed", what, err)
	}
}
