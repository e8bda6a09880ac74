package anetest

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/refkernels"
)

// Bindings: one compiled kernel evaluated on several sets of surfaces, the way the layers of a model
// share one kernel and keep their weights in their own binding.

// Sizes of the dynamic-weights matmul the binding tests run: y[o, t] = sum_i W[i, o]·act[i, t], with
// act and W packed side by side along the spatial axis of the one fp32 input.
const bindIC, bindOC, bindSeq = 8, 32, 32

// bindLayer is one binding's input values (fp16-exact) and the output they must give.
type bindLayer struct {
	in   []float32 // the input surface, channel-first: channel i holds act[i, :] then W[i, :]
	want []float64 // y, [oc, seq] channel-first
}

// newBindLayer draws a layer's activations and weights and computes y in float64.
func newBindLayer(rng *rand.Rand) bindLayer {
	sp := bindSeq + bindOC
	l := bindLayer{in: uniform(rng, bindIC*sp, -1, 1), want: make([]float64, bindOC*bindSeq)}
	for o := range bindOC {
		for t := range bindSeq {
			sum := 0.0
			for i := range bindIC {
				sum += float64(l.in[i*sp+bindSeq+o]) * float64(l.in[i*sp+t])
			}
			l.want[o*bindSeq+t] = sum
		}
	}
	return l
}

// bindingKernel compiles the dynamic-weights matmul on b.
func bindingKernel(t *testing.T, b ane.Backend) ane.Kernel {
	t.Helper()
	rk, err := refkernels.DynMatmul(bindIC, bindOC, bindSeq)
	if err != nil {
		t.Fatal(err)
	}
	k, err := b.Compile(rk.Program, rk.Weights)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// bind makes n bindings of k, closed when the test ends.
func bind(t *testing.T, k ane.Kernel, n int) []ane.Binding {
	t.Helper()
	var bs []ane.Binding
	for range n {
		bd, err := k.Bind()
		if err != nil {
			t.Fatalf("Bind: %v", err)
		}
		t.Cleanup(func() { bd.Close() })
		bs = append(bs, bd)
	}
	return bs
}

// rawBytes returns a copy of a surface's bytes.
func rawBytes(t *testing.T, s *ane.Surface) []byte {
	t.Helper()
	out := make([]byte, s.Bytes())
	if err := s.ReadBytes(0, out); err != nil {
		t.Fatal(err)
	}
	return out
}

func testBindings(t *testing.T, b ane.Backend) {
	t.Run("Surfaces", func(t *testing.T) {
		k := surfaceKernel(t, b)
		before := b.Compiles()
		bs := bind(t, k, 3)
		if got := b.Compiles(); got != before {
			t.Errorf("making 3 bindings moved the compile count from %d to %d", before, got)
		}
		for i, bd := range bs {
			for _, side := range []struct {
				what       string
				mine, kern []*ane.Surface
			}{{"input", bd.Inputs(), k.Inputs()}, {"output", bd.Outputs(), k.Outputs()}} {
				if len(side.mine) != len(side.kern) {
					t.Fatalf("binding %d: %d %ss, the kernel has %d", i, len(side.mine), side.what, len(side.kern))
				}
				for j, s := range side.mine {
					ks := side.kern[j]
					if s == ks || s.Memory() == ks.Memory() {
						t.Errorf("binding %d %s %d is the kernel's own surface", i, side.what, j)
					}
					if s.Name() != ks.Name() || !s.Type().Equal(ks.Type()) || s.Bytes() != ks.Bytes() {
						t.Errorf("binding %d %s %d: %s %s of %d bytes, the kernel's is %s %s of %d", i, side.what, j,
							s.Name(), s.Type(), s.Bytes(), ks.Name(), ks.Type(), ks.Bytes())
					}
					if raw := rawBytes(t, s); !bytes.Equal(raw, make([]byte, len(raw))) {
						t.Errorf("binding %d %s %s: a new binding's surface does not read zero", i, side.what, s.Name())
					}
				}
			}
		}
	})
	t.Run("Independent", func(t *testing.T) {
		k := bindingKernel(t, b)
		before := b.Compiles()
		all := append([]ane.Binding{k}, bind(t, k, 3)...)
		if got := b.Compiles(); got != before {
			t.Errorf("making bindings moved the compile count from %d to %d", before, got)
		}
		rng := rand.New(rand.NewPCG(31, 32))
		layers := make([]bindLayer, len(all))
		for i, bd := range all {
			layers[i] = newBindLayer(rng)
			writeAll(t, bd.Inputs()[0], layers[i].in)
		}
		// Evaluate out of order, so that a binding reading another's inputs, or writing another's
		// outputs, gives a wrong answer somewhere.
		for _, i := range []int{2, 0, 3, 1} {
			evalOnce(t, all[i])
		}
		outs := make([][]byte, len(all))
		for i, bd := range all {
			near(t, "binding "+string(rune('0'+i))+" y", readAll(t, bd.Outputs()[0]), layers[i].want, fp16Tol)
			outs[i] = rawBytes(t, bd.Outputs()[0])
		}
		// New inputs in binding 1, evaluated: no other binding's outputs change.
		layers[1] = newBindLayer(rng)
		writeAll(t, all[1].Inputs()[0], layers[1].in)
		evalOnce(t, all[1])
		near(t, "binding 1 y after new inputs", readAll(t, all[1].Outputs()[0]), layers[1].want, fp16Tol)
		for i, bd := range all {
			if i != 1 && !bytes.Equal(rawBytes(t, bd.Outputs()[0]), outs[i]) {
				t.Errorf("evaluating binding 1 changed the outputs of binding %d", i)
			}
		}
		// Binding 2's inputs written, not evaluated: its outputs stay those of its last eval.
		writeAll(t, all[2].Inputs()[0], newBindLayer(rng).in)
		evalOnce(t, all[0])
		if !bytes.Equal(rawBytes(t, all[2].Outputs()[0]), outs[2]) {
			t.Errorf("evaluating binding 0 changed the outputs of binding 2")
		}
	})
	t.Run("Identical", func(t *testing.T) {
		k := surfaceKernel(t, b)
		bd := bind(t, k, 1)[0]
		rng := rand.New(rand.NewPCG(33, 34))
		for j, s := range k.Inputs() {
			v := uniform(rng, s.Channels()*s.Spatial(), -4, 4)
			writeAll(t, s, v)
			writeAll(t, bd.Inputs()[j], v)
		}
		evalOnce(t, k)
		evalOnce(t, bd)
		for j, s := range k.Outputs() {
			if !bytes.Equal(rawBytes(t, s), rawBytes(t, bd.Outputs()[j])) {
				t.Errorf("output %s: the binding's bytes differ from the kernel's for the same inputs", s.Name())
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		k := bindingKernel(t, b)
		all := append([]ane.Binding{k}, bind(t, k, 2)...)
		rng := rand.New(rand.NewPCG(35, 36))
		layers := make([]bindLayer, len(all))
		for i, bd := range all {
			layers[i] = newBindLayer(rng)
			writeAll(t, bd.Inputs()[0], layers[i].in)
		}
		var wg sync.WaitGroup
		errs := make([]error, len(all))
		for i, bd := range all {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 5 {
					if err := bd.Eval(context.Background()); err != nil {
						errs[i] = err
						return
					}
				}
			}()
		}
		wg.Wait()
		for i, bd := range all {
			if errs[i] != nil {
				t.Errorf("binding %d: concurrent eval: %v", i, errs[i])
				continue
			}
			near(t, "binding "+string(rune('0'+i))+" y after concurrent evals", readAll(t, bd.Outputs()[0]), layers[i].want, fp16Tol)
		}
	})
	t.Run("CloseBinding", func(t *testing.T) {
		k := bindingKernel(t, b)
		bs := bind(t, k, 2)
		evalOnce(t, bs[0])
		if err := bs[0].Close(); err != nil {
			t.Fatal(err)
		}
		wantClosed(t, "binding", bs[0])
		if err := bs[0].Close(); err != nil {
			t.Errorf("second Close of a binding: %v", err)
		}
		// The kernel and its other bindings still work.
		rng := rand.New(rand.NewPCG(37, 38))
		for _, bd := range []ane.Binding{k, bs[1]} {
			l := newBindLayer(rng)
			writeAll(t, bd.Inputs()[0], l.in)
			evalOnce(t, bd)
			near(t, "y after another binding closed", readAll(t, bd.Outputs()[0]), l.want, fp16Tol)
		}
		if _, err := k.Bind(); err != nil {
			t.Errorf("Bind after a binding closed: %v", err)
		}
	})
	t.Run("CloseKernel", func(t *testing.T) {
		k := bindingKernel(t, b)
		bs := bind(t, k, 2)
		evalOnce(t, bs[1])
		if err := bs[1].Close(); err != nil {
			t.Fatal(err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		wantClosed(t, "kernel", k)
		for _, bd := range bs {
			wantClosed(t, "binding of a closed kernel", bd)
			if err := bd.Close(); err != nil {
				t.Errorf("Close of a binding after its kernel: %v", err)
			}
		}
		if _, err := k.Bind(); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("Bind after Close: got %v, want ane.ErrClosed", err)
		}
	})
}

// wantClosed checks that bd's Eval and the accesses to its surfaces fail with ErrClosed.
func wantClosed(t *testing.T, what string, bd ane.Binding) {
	t.Helper()
	if err := bd.Eval(context.Background()); !errors.Is(err, ane.ErrClosed) {
		t.Errorf("%s: Eval after Close: got %v, want ane.ErrClosed", what, err)
	}
	for _, s := range append(append([]*ane.Surface(nil), bd.Inputs()...), bd.Outputs()...) {
		buf := make([]float32, s.Spatial())
		if err := s.ReadChannels(0, 1, buf); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("%s: read of %s after Close: got %v, want ane.ErrClosed", what, s.Name(), err)
		}
		if err := s.WriteChannels(0, 1, buf); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("%s: write of %s after Close: got %v, want ane.ErrClosed", what, s.Name(), err)
		}
	}
}
