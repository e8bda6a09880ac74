package emulator

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/par"
	"github.com/anestar/anestar/mil"
)

// A product and a softmax big enough that their loops and the product split over the cores.
const streamSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 1, 256, 256]> x) {
        bool f = const()[name=string("f"), val=bool(false)];
        bool t = const()[name=string("t"), val=bool(true)];
        tensor<fp16, [1, 1, 256, 256]> s = matmul(x=x, y=x, transpose_x=f, transpose_y=t)[name=string("s")];
        int32 ax = const()[name=string("ax"), val=int32(-1)];
        tensor<fp16, [1, 1, 256, 256]> p = softmax(x=s, axis=ax)[name=string("p")];
    } -> (p);
}`

// Kernels compiled on two streams evaluate at the same time, each on a goroutine that par.Occupy marks
// (as binding.start runs them), and give the bits of evals in turn; streams share the compile count.
func TestStreams(t *testing.T) {
	p, err := mil.Parse("s.mil", []byte(streamSrc))
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{Relaxed: true})
	s1, err := b.Stream(1)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := b.Stream(1); again != s1 {
		t.Fatal("Stream(1) made a second stream")
	}
	if s0, _ := b.Stream(0); s0 != ane.Backend(b) {
		t.Fatal("Stream(0) is not the backend itself")
	}
	if _, err := b.Stream(-1); err == nil {
		t.Fatal("Stream(-1) gave no error")
	}
	var ks [2]ane.Kernel
	for i, be := range []ane.Backend{b, s1} {
		if ks[i], err = be.Compile(p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b.Compiles() != 2 || s1.Compiles() != 2 {
		t.Fatalf("compiles %d and %d, want 2 on both", b.Compiles(), s1.Compiles())
	}
	r := rand.New(rand.NewPCG(1, 2))
	ins := make([][]float32, 2)
	for i := range ins {
		ins[i] = make([]float32, 256*256)
		for j := range ins[i] {
			ins[i][j] = float32(r.NormFloat64()) * 0.2
		}
	}
	want := [2][][]float32{run(t, ks[0], ins[0]), run(t, ks[1], ins[1])}
	for i, k := range ks { // new inputs, then the old back: the evals below must redo the work
		run(t, k, ins[1-i])
		if err := k.Inputs()[0].WriteChannels(0, 1, ins[i]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release := par.Occupy()
			defer release()
			for range 5 {
				if errs[i] = k.Eval(context.Background()); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, k := range ks {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got := make([]float32, 256*256)
		if err := k.Outputs()[0].ReadChannels(0, 1, got); err != nil {
			t.Fatal(err)
		}
		for j := range got {
			if got[j] != want[i][0][j] {
				t.Fatalf("stream %d: element %d is %v at once, %v in turn", i, j, got[j], want[i][0][j])
			}
		}
	}
	if n := par.Occupied(); n != 0 {
		t.Fatalf("%d goroutines still marked after their release", n)
	}
}
