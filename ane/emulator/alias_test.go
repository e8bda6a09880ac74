package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/refkernels"
)

// copied counts the elements k's Eval copies into (inputs) and out of (outputs) its own plan.
func copied(k *Kernel) (in, out int) {
	for _, x := range k.inX {
		for _, p := range x.pieces {
			in += len(p.data)
		}
	}
	for _, x := range k.outX {
		for _, p := range x.pieces {
			out += len(p.data)
		}
	}
	return in, out
}

var aliasKernels = []struct {
	name string
	make func(refkernels.Config) (*refkernels.Kernel, error)
}{
	{"sdpa_fwd_dynamic", refkernels.SDPAFwdDynamic},
	{"ffn_w13_dynamic", refkernels.FFNW13Dynamic},
	{"ffn_bwd_w13t_dynamic", refkernels.FFNBwdW13tDynamic},
	{"qkv_bwd_dynamic", refkernels.QKVBwdDynamic},
}

// In FP32 numerics the dynamic-weight kernels (fp32 I/O) read their input where it lies and give the
// bits of the plain plan, which copies it; in FP16 numerics the input is copied (rounded on the way
// in). Outputs are copied either way.
func TestInputsInPlaceGiveCopiedBits(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(11, 12))
	cfg := refkernels.Config{Dim: 32, Hidden: 64, Heads: 2, Seq: 32}
	for _, m := range numerics {
		for _, pk := range aliasKernels {
			t.Run(m.name+"/"+pk.name, func(t *testing.T) {
				rk, err := pk.make(cfg)
				if err != nil {
					t.Fatal(err)
				}
				fused, plain := compileBoth(t, rk, Options{Numerics: m.n})
				defer fused.Close()
				defer plain.Close()
				fin, fout := copied(fused)
				pin, pout := copied(plain)
				if pin == 0 || pout == 0 {
					t.Fatalf("plain plan copies %d input and %d output elements: it should copy all", pin, pout)
				}
				if fout != pout {
					t.Errorf("output copies: %d elements, plain %d", fout, pout)
				}
				if wantIn := map[Numerics]int{FP32: 0, FP16: pin}[m.n]; fin != wantIn {
					t.Errorf("input copies: %d elements, want %d", fin, wantIn)
				}
				for range 2 { // a second Eval reads the new input
					in := fused.Inputs()[0]
					x := randInput(rng, in.Channels()*in.Spatial(), 1)
					sameOutputs(t, pk.name, fused, plain, x)
				}
			})
		}
	}
}

// In FP32 numerics each binding of a kernel that reads its inputs in place has a plan of its own (in
// FP16, none): bindings written first and evaluated in turn, forth and back, each give what the plain
// plan gives for their own input.
func TestBindingPlansKeepTheirSurfaces(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(13, 14))
	rk, err := refkernels.FFNW13Dynamic(refkernels.Config{Dim: 32, Hidden: 64, Heads: 2, Seq: 32})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range numerics {
		t.Run(m.name, func(t *testing.T) {
			fused, plain := compileBoth(t, rk, Options{Numerics: m.n})
			defer fused.Close()
			defer plain.Close()
			binds := []ane.Binding{fused}
			for range 2 {
				b, err := fused.Bind()
				if err != nil {
					t.Fatal(err)
				}
				if own := b.(*Binding).plan != nil; own != (m.n == FP32) {
					t.Fatalf("binding has a plan of its own: %v, want %v", own, m.n == FP32)
				}
				binds = append(binds, b)
			}
			in := fused.Inputs()[0]
			xs := make([][]float32, len(binds))
			for i, b := range binds {
				xs[i] = randInput(rng, in.Channels()*in.Spatial(), 1)
				if err := b.Inputs()[0].WriteChannels(0, in.Channels(), xs[i]); err != nil {
					t.Fatal(err)
				}
			}
			for _, i := range []int{0, 1, 2, 2, 1, 0} { // each binding's input must outlast the others' evals
				if err := binds[i].Eval(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			for i, b := range binds {
				out := b.Outputs()[0]
				got := make([]float32, out.Channels()*out.Spatial())
				if err := out.ReadChannels(0, out.Channels(), got); err != nil {
					t.Fatal(err)
				}
				sameBits(t, fmt.Sprintf("binding %d", i), got, run(t, plain, xs[i])[0])
			}
		})
	}
}
