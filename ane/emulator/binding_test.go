package emulator

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/refkernels"
)

// bindTestKernel compiles the dynamic-weights attention forward at small sizes on its own backend.
func bindTestKernel(t testing.TB, n Numerics) (*Backend, *Kernel) {
	t.Helper()
	rk, err := refkernels.SDPAFwdDynamic(refkernels.Config{Dim: 64, Hidden: 128, Heads: 2, Seq: 32})
	if err != nil {
		t.Fatal(err)
	}
	be := New(Options{Relaxed: true, Numerics: n})
	k, err := be.Compile(rk.Program, rk.Weights)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return be, k.(*Kernel)
}

// TestBindingEvalAllocatesNothing: a binding's Eval runs the kernel's plan (or, in FP32 numerics, its
// own) on its own surfaces without allocating, like the kernel's own Eval.
func TestBindingEvalAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts mean nothing under the race detector")
	}
	for _, m := range numerics {
		t.Run(m.name, func(t *testing.T) { bindingEvalAllocatesNothing(t, m.n) })
	}
}

func bindingEvalAllocatesNothing(t *testing.T, n Numerics) {
	_, k := bindTestKernel(t, n)
	bd, err := k.Bind()
	if err != nil {
		t.Fatal(err)
	}
	in := bd.Inputs()[0]
	evalOne(t, bd, randInput(rand.New(rand.NewPCG(5, 6)), in.Channels()*in.Spatial(), 1))
	ctx := context.Background()
	if n := testing.AllocsPerRun(10, func() {
		if err := bd.Eval(ctx); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("binding Eval allocates %v times per run, want 0", n)
	}
	if got := bd.(*Binding).Evals(); got != 12 {
		t.Errorf("binding Evals = %d after 12 evals", got)
	}
	if got := k.Evals(); got != 0 {
		t.Errorf("kernel Evals = %d after evals of another binding only", got)
	}
}

// TestBindingSharesScratch: bindings add their surfaces' memory and nothing else (a binding's own plan,
// in FP32 numerics, shares the kernel's constants and the backend's scratch); closing one shelves that
// memory for the next binding or compile.
func TestBindingSharesScratch(t *testing.T) {
	for _, m := range numerics {
		t.Run(m.name, func(t *testing.T) { bindingSharesScratch(t, m.n) })
	}
}

func bindingSharesScratch(t *testing.T, n Numerics) {
	be, k := bindTestKernel(t, n)
	scratch := be.ar.scratchBytes()
	var surf int
	for _, s := range append(append([]*ane.Surface(nil), k.Inputs()...), k.Outputs()...) {
		surf += s.Bytes()
	}
	bd, err := k.Bind()
	if err != nil {
		t.Fatal(err)
	}
	if got := be.ar.scratchBytes(); got != scratch {
		t.Errorf("scratch went from %d to %d bytes with a binding", scratch, got)
	}
	if held := be.ar.rec.held(); held != 0 {
		t.Fatalf("%d bytes shelved before any Close", held)
	}
	if err := bd.Close(); err != nil {
		t.Fatal(err)
	}
	if held := be.ar.rec.held(); held != surf {
		t.Errorf("closing a binding shelved %d bytes, its surfaces hold %d", held, surf)
	}
	if _, err := k.Bind(); err != nil {
		t.Fatal(err)
	}
	if held := be.ar.rec.held(); held != 0 {
		t.Errorf("the next binding left %d bytes of the closed one's memory on the shelf", held)
	}
}
