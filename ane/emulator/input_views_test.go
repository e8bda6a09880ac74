package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// inputViewsSrc carves windows out of one packed [1, 8, 1, 40] input, as a packed kernel's slices do:
// a (gathered for exp), b (read in place by a product), c (gathered, overlapping a and b), then, after
// a step that computes, d (gathered: it cannot be decoded before the steps that run ahead of it).
const inputViewsSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 8, 1, 40]> x) {
        tensor<int32, [4]> ab = const()[name=string("ab"), val=tensor<int32, [4]>([0, 0, 0, 0])];
        tensor<int32, [4]> az = const()[name=string("az"), val=tensor<int32, [4]>([1, 8, 1, 16])];
        tensor<%[1]s, [1, 8, 1, 16]> a = slice_by_size(x=x, begin=ab, size=az)[name=string("a")];
        tensor<int32, [4]> bb = const()[name=string("bb"), val=tensor<int32, [4]>([0, 2, 0, 16])];
        tensor<int32, [4]> bz = const()[name=string("bz"), val=tensor<int32, [4]>([1, 4, 1, 8])];
        tensor<%[1]s, [1, 4, 1, 8]> bs = slice_by_size(x=x, begin=bb, size=bz)[name=string("bs")];
        tensor<int32, [2]> b2 = const()[name=string("b2"), val=tensor<int32, [2]>([4, 8])];
        tensor<%[1]s, [4, 8]> b = reshape(x=bs, shape=b2)[name=string("b")];
        tensor<int32, [4]> cb = const()[name=string("cb"), val=tensor<int32, [4]>([0, 0, 0, 10])];
        tensor<int32, [4]> cz = const()[name=string("cz"), val=tensor<int32, [4]>([1, 8, 1, 12])];
        tensor<%[1]s, [1, 8, 1, 12]> c = slice_by_size(x=x, begin=cb, size=cz)[name=string("c")];
        tensor<%[1]s, [8, 8]> m = matmul(x=b, y=b, transpose_x=bool(true), transpose_y=bool(false))[name=string("m")];
        tensor<%[1]s, [1, 8, 1, 16]> ea = exp(x=a)[name=string("ea")];
        tensor<%[1]s, [1, 8, 1, 12]> ec = exp(x=c)[name=string("ec")];
        tensor<int32, [4]> db = const()[name=string("db"), val=tensor<int32, [4]>([0, 5, 0, 30])];
        tensor<int32, [4]> dz = const()[name=string("dz"), val=tensor<int32, [4]>([1, 3, 1, 10])];
        tensor<%[1]s, [1, 3, 1, 10]> d = slice_by_size(x=x, begin=db, size=dz)[name=string("d")];
        tensor<%[1]s, [1, 3, 1, 10]> sd = sigmoid(x=d)[name=string("sd")];
    } -> (m, ea, ec, sd);
}
`

// A packed input's gathered windows are decoded straight into their slices' buffers (the slices that
// come first; d comes after a step that runs), with the bits of gathering them, in both numerics, on
// the kernel's own surfaces and on a second binding's.
func TestInputWindowsDecodedIntoSlices(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	input := func() []float32 {
		x := make([]float32, 8*40)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	for _, m := range exactModes {
		t.Run(m.dt, func(t *testing.T) {
			fused, plain := compileSrcBoth(t, fmt.Sprintf(inputViewsSrc, m.dt), m.n)
			if m.n == FP16 {
				if got := gathers(fused); got != 1 {
					t.Errorf("fused kernel: %d slices gather, want 1 (d): a and c are decoded into place", got)
				}
				if fused.inSegs == nil || fused.inSegs[0] == nil {
					t.Errorf("fused kernel: the input is read whole, want its windows")
				}
			}
			if got := gathers(plain); got != 4 {
				t.Errorf("plain kernel: %d slices gather, want all 4", got)
			}
			x := input()
			sameOutputs(t, "own surfaces", fused, plain, x)
			b, err := fused.Bind()
			if err != nil {
				t.Fatal(err)
			}
			y := input()
			got, want := run(t, b, y), run(t, plain, y)
			for i := range want {
				sameBits(t, fmt.Sprintf("binding/output %d", i), got[i], want[i])
			}
			// The kernel's own surfaces still hold x's results after the binding's eval.
			sameOutputs(t, "own surfaces again", fused, plain, x)
		})
	}
}

// Overlapping and touching runs merge, so no value is decoded twice; apart ones stay apart.
func TestMergeRuns(t *testing.T) {
	got := mergeRuns([]span{{off: 10, n: 5}, {off: 0, n: 4}, {off: 12, n: 10}, {off: 4, n: 2}, {off: 30, n: 1}, {off: 14, n: 2}})
	want := []span{{off: 0, n: 6}, {off: 10, n: 12}, {off: 30, n: 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i].off != want[i].off || got[i].n != want[i].n {
			t.Errorf("run %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
