package emulator

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/anetest"
	"github.com/anestar/anestar/internal/refkernels"
	"github.com/anestar/anestar/mil"
)

// poisoned returns a backend that hands out every float buffer full of NaN, so that a step reading
// values it has not written (relying on cleared buffers) shows.
func poisoned(opts Options) *Backend {
	b := New(opts)
	b.ar.rec.poison = true
	return b
}

// The conformance suite passes when every buffer a kernel gets holds NaN: no op relies on cleared buffers.
func TestRecycledBuffersPoisoned(t *testing.T) {
	t.Run("FP16", func(t *testing.T) { anetest.Run(t, poisoned(Options{Numerics: FP16})) })
	t.Run("FP32", func(t *testing.T) { anetest.Run(t, poisoned(Options{Numerics: FP32})) })
}

// refKernelGens are the weight-bearing and weight-free kernels of the reference layer at config c.
func refKernelGens(c refkernels.Config, rng *rand.Rand) []func() (*refkernels.Kernel, error) {
	d, h := c.Dim, c.Hidden
	w := func(n int) []float32 { return randInput(rng, n, 0.3) }
	gain := w(d)
	return []func() (*refkernels.Kernel, error){
		func() (*refkernels.Kernel, error) {
			return refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: gain, Wq: w(d * d), Wk: w(d * d), Wv: w(d * d), Wo: w(d * d)})
		},
		func() (*refkernels.Kernel, error) {
			return refkernels.FFNFwdTaps(c, refkernels.FFNWeights{RMS: gain, W1: w(h * d), W3: w(h * d), W2: w(d * h)})
		},
		func() (*refkernels.Kernel, error) { return refkernels.FFNBwd(c, w(h*d), w(d*h), w(h*d)) },
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, w(d*d)) },
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
		func() (*refkernels.Kernel, error) { return refkernels.QKVBwd(c, w(d*d), w(d*d), w(d*d)) },
	}
}

// The reference layer's kernels give the same bits on recycled buffers (poisoned with NaN, and holding a
// closed kernel's values) as on fresh ones, fused and not, in both numeric modes.
func TestRecycledRefKernelsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := refkernels.Config{Dim: 24, Hidden: 16, Heads: 3, Seq: 17}
	var rks []*refkernels.Kernel
	for _, gen := range refKernelGens(c, rng) {
		rk, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		rks = append(rks, rk)
	}
	for _, mode := range numerics {
		opts := Options{Numerics: mode.n, Relaxed: true}
		fresh, pois := New(opts), poisoned(opts)
		compileAll := func(b *Backend) []*Kernel {
			var ks []*Kernel
			for _, rk := range rks {
				k, err := b.Compile(rk.Program, rk.Weights)
				if err != nil {
					t.Fatal(err)
				}
				ks = append(ks, k.(*Kernel))
			}
			return ks
		}
		want := compileAll(fresh)
		// Two generations on the poisoned backend: the second takes the first's buffers.
		var got []*Kernel
		for gen := range 2 {
			if gen > 0 {
				for i, k := range got {
					evalOne(t, k, randInput(rng, k.Inputs()[0].Channels()*k.Inputs()[0].Spatial(), 5)) // leave values behind
					if err := k.Close(); err != nil {
						t.Fatal(err)
					}
					got[i] = nil
				}
			}
			got = compileAll(pois)
		}
		for i, k := range want {
			x := randInput(rng, k.Inputs()[0].Channels()*k.Inputs()[0].Spatial(), 2)
			sameBits(t, fmt.Sprintf("%s/%s", rks[i].Name, mode.name), evalOne(t, got[i], x), evalOne(t, k, x))
		}
	}
}

const recycleSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x) {
        tensor<fp16, [1, 2, 1, 3]> a = add(x=x, y=fp16(1.0))[name=string("a")];
        tensor<fp16, [1, 2, 1, 3]> b = mul(x=a, y=fp16(2.0))[name=string("b")];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool il = const()[name=string("il"), val=bool(false)];
        tensor<fp16, [1, 4, 1, 3]> out = concat(axis=ax, interleave=il, values=(b, x))[name=string("out")];
    } -> (out);
}
`

// bases returns the first element's address of every buffer a kernel owns, and of its surfaces' memory.
func bases(t *testing.T, k *Kernel) map[uintptr]bool {
	t.Helper()
	m := map[uintptr]bool{}
	for _, b := range k.owned {
		m[uintptr(unsafe.Pointer(unsafe.SliceData(b)))] = true
	}
	for _, s := range k.scratch {
		m[uintptr(unsafe.Pointer(unsafe.SliceData(s.data)))] = true
	}
	for _, s := range append(k.Inputs(), k.Outputs()...) {
		mem := s.Memory()
		if err := mem.Lock(true); err != nil {
			t.Fatal(err)
		}
		m[uintptr(unsafe.Pointer(unsafe.SliceData(mem.Bytes())))] = true
		mem.Unlock(true)
	}
	return m
}

// A recompile after Close takes the closed kernel's buffers and surface memory and answers right; the
// closed kernel's surfaces fail with the kernel-closed error; the output concat gets no buffer and
// does not run; the first Eval empties the shelves.
func TestCloseRecycles(t *testing.T) {
	in := []float32{0, 1, 2, 3, -1, 0.25}
	want := make([]float32, 12)
	for i, v := range in {
		want[i] = (v + 1) * 2
		want[6+i] = v
	}
	be := New(Options{Relaxed: true})
	k1 := compileFromText(t, be, recycleSrc)
	for _, s := range k1.steps {
		if s.op.Kind == "concat" {
			t.Error("the output concat runs")
		}
	}
	if k1.outT[0].data != nil {
		t.Error("the output concat has a buffer")
	}
	if got := run(t, k1, in)[0]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("first kernel: %v, want %v", got, want)
	}
	old := bases(t, k1)
	ins, outs := k1.Inputs(), k1.Outputs()
	if err := k1.Close(); err != nil {
		t.Fatal(err)
	}
	if be.ar.rec.held() == 0 || be.ar.scratchBytes() != 0 {
		t.Errorf("after Close: %d bytes shelved, %d of scratch; want some and none", be.ar.rec.held(), be.ar.scratchBytes())
	}
	o := make([]float32, 12)
	if err := outs[0].ReadChannels(0, 4, o); err == nil || !strings.Contains(err.Error(), ane.ErrClosed.Error()) {
		t.Errorf("reading a closed kernel's output: %v, want the kernel-closed error", err)
	}
	if err := ins[0].WriteChannels(0, 2, in); err == nil || !strings.Contains(err.Error(), ane.ErrClosed.Error()) {
		t.Errorf("writing a closed kernel's input: %v, want the kernel-closed error", err)
	}
	k2 := compileFromText(t, be, recycleSrc)
	reused := 0
	for b := range bases(t, k2) {
		if old[b] {
			reused++
		}
	}
	if reused != len(old) {
		t.Errorf("recompile reused %d of %d buffers", reused, len(old))
	}
	if got := run(t, k2, in)[0]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("recompiled kernel: %v, want %v", got, want)
	}
	if be.ar.rec.held() != 0 {
		t.Errorf("after an Eval: %d bytes shelved, want 0", be.ar.rec.held())
	}
	if err := k2.Close(); err != nil {
		t.Fatal(err)
	}
}

// Kernels of one backend share their scratch: the six kernels of the reference layer, compiled on one
// (poisoned) backend and run in turn, in two orders, give the bits each gives compiled alone, and
// their scratch is well below the sum of theirs (it cannot be below the largest kernel's).
func TestSharedScratch(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	c := refkernels.Config{Dim: 24, Hidden: 16, Heads: 3, Seq: 17}
	shared := poisoned(Options{Relaxed: true})
	var ks, alone []*Kernel
	largest, sum := 0, 0
	for _, gen := range refKernelGens(c, rng) {
		rk, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		k, err := shared.Compile(rk.Program, rk.Weights)
		if err != nil {
			t.Fatal(err)
		}
		own := New(Options{Relaxed: true})
		ka, err := own.Compile(rk.Program, rk.Weights)
		if err != nil {
			t.Fatal(err)
		}
		ks, alone = append(ks, k.(*Kernel)), append(alone, ka.(*Kernel))
		largest = max(largest, own.ar.scratchBytes())
		sum += own.ar.scratchBytes()
	}
	if got := shared.ar.scratchBytes(); got < largest || got > sum/2 {
		t.Errorf("shared scratch %d bytes; the largest kernel's is %d, the sum %d", got, largest, sum)
	}
	for pass, order := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 3, 1, 4, 0, 2}} {
		for _, i := range order {
			in := ks[i].Inputs()[0]
			x := randInput(rng, in.Channels()*in.Spatial(), 2)
			sameBits(t, fmt.Sprintf("pass %d kernel %d", pass, i), evalOne(t, ks[i], x), evalOne(t, alone[i], x))
		}
	}
	// Closing all but one keeps that one's scratch and shelves the rest.
	for _, k := range ks[1:] {
		k.Close()
	}
	own := 0
	for _, s := range ks[0].scratch {
		own += 4 * cap(s.data)
	}
	if got := shared.ar.scratchBytes(); got != own {
		t.Errorf("after closing the others: %d bytes of scratch, want the open kernel's %d", got, own)
	}
	ks[0].Close()
}

// Buffers that no compile takes are dropped after recycleAge compiles even without an Eval, and a
// collection does not empty the shelves.
func TestRecycleAges(t *testing.T) {
	be := New(Options{Relaxed: true})
	k := compileFromText(t, be, recycleSrc)
	run(t, k, make([]float32, 6))
	k.Close()
	runtime.GC()
	const other = `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 5]> x) {
        tensor<fp32, [1, 5]> out = exp(x=x)[name=string("out")];
    } -> (out);
}
`
	for i := range recycleAge + 1 {
		if be.ar.rec.held() == 0 {
			t.Fatalf("shelves empty after %d compiles, want them kept for %d", i, recycleAge)
		}
		compileFromText(t, be, other).Close()
	}
	// Only the last kernel's buffers (shelved by its Close) are left: two fp32 surfaces and two scratch
	// buffers (its input and the exp's result) of 5 values each.
	if n := be.ar.rec.held(); n != 4*4*5 {
		t.Errorf("%d bytes shelved after %d compiles, want the last kernel's 80", n, recycleAge+1)
	}
}

func compileFromText(t *testing.T, be *Backend, src string) *Kernel {
	t.Helper()
	p := parseText(t, src)
	k, err := be.Compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return k.(*Kernel)
}

func parseText(t *testing.T, src string) *mil.Program {
	t.Helper()
	p, err := mil.Parse("t.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
