package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/refkernels"
)

// copies counts the steps of k that materialise a transpose (a transpose step that computes no product).
func copies(k *Kernel) int { return viewCopies(k, "transpose") }

// Transposes of the last two dims read only by matmuls, and transposes of matmul results, fold into the
// products and give the separate ops' bits: rank 3 against a broadcast rank-2 operand, a transpose read
// by two products, and one also read by another op (which stays).
func TestFoldedTransposesExact(t *testing.T) {
	fixedOrderGemm(t)
	const src = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 12, 1, 5]> a, tensor<%[1]s, [1, 6, 1, 7]> b) {
        tensor<int32, [3]> as = const()[name=string("as"), val=tensor<int32, [3]>([2, 6, 5])];
        tensor<%[1]s, [2, 6, 5]> a3 = reshape(x=a, shape=as)[name=string("a3")];
        tensor<int32, [3]> p3 = const()[name=string("p3"), val=tensor<int32, [3]>([0, 2, 1])];
        tensor<%[1]s, [2, 5, 6]> at = transpose(x=a3, perm=p3)[name=string("at")];
        tensor<int32, [2]> bs = const()[name=string("bs"), val=tensor<int32, [2]>([6, 7])];
        tensor<%[1]s, [6, 7]> b2 = reshape(x=b, shape=bs)[name=string("b2")];
        tensor<%[1]s, [2, 5, 7]> m = matmul(x=at, y=b2)[name=string("m")];
        tensor<%[1]s, [2, 7, 5]> mt = transpose(x=m, perm=p3)[name=string("mt")];
        tensor<int32, [2]> p2 = const()[name=string("p2"), val=tensor<int32, [2]>([-1, 0])];
        tensor<%[1]s, [7, 6]> bt = transpose(x=b2, perm=p2)[name=string("bt")];
        tensor<%[1]s, [2, 7, 5]> m2 = matmul(x=bt, y=at, transpose_x=bool(false), transpose_y=bool(true))[name=string("m2")];
        tensor<%[1]s, [2, 7, 5]> s = add(x=mt, y=m2)[name=string("s")];
        tensor<int32, [4]> os = const()[name=string("os"), val=tensor<int32, [4]>([1, 14, 1, 5])];
        tensor<%[1]s, [1, 14, 1, 5]> out = reshape(x=s, shape=os)[name=string("out")];
        tensor<%[1]s, [7, 6]> r = relu(x=bt)[name=string("r")];
        tensor<int32, [4]> rs = const()[name=string("rs"), val=tensor<int32, [4]>([1, 7, 1, 6])];
        tensor<%[1]s, [1, 7, 1, 6]> out2 = reshape(x=r, shape=rs)[name=string("out2")];
    } -> (out, out2);
}
`
	rng := rand.New(rand.NewPCG(11, 12))
	for _, mode := range exactModes {
		fused, plain := compileSrcBoth(t, fmt.Sprintf(src, mode.dt), mode.n)
		if f, s := copies(fused), copies(plain); f != 1 || s != 3 {
			t.Errorf("%s: %d transposes copied fused, %d separate; want 1 and 3", mode.dt, f, s)
		}
		for _, r := range []float64{0.5, 30} {
			sameOutputs(t, fmt.Sprintf("%s/range %g", mode.dt, r), fused, plain, randInput(rng, 60, r), randInput(rng, 42, r))
		}
	}
}

// The attention kernels of the reference layer at the reference head size copy no transposes, with the
// separate ops' bits.
func TestAttentionTransposesFolded(t *testing.T) {
	fixedOrderGemm(t)
	c := refkernels.Config{Dim: 128, Hidden: 16, Heads: 2, Seq: 80}
	rng := rand.New(rand.NewPCG(13, 14))
	d := c.Dim
	w := func(n int) []float32 { return randInput(rng, n, 0.1) }
	gain := make([]float32, d)
	for i := range gain {
		gain[i] = 1
	}
	gens := []func() (*refkernels.Kernel, error){
		func() (*refkernels.Kernel, error) {
			return refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: gain, Wq: w(d * d), Wk: w(d * d), Wv: w(d * d), Wo: w(d * d)})
		},
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd1(c, w(d*d)) },
		func() (*refkernels.Kernel, error) { return refkernels.SDPABwd2(c) },
	}
	for _, gen := range gens {
		rk, err := gen()
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range numerics {
			name := rk.Name + "/" + mode.name
			fused, plain := compileBoth(t, rk, Options{Numerics: mode.n})
			if n := copies(fused); n != 0 || copies(plain) == 0 {
				t.Errorf("%s: %d transposes copied fused, %d separate; want 0 fused", name, n, copies(plain))
			}
			in := fused.Inputs()[0]
			x := randInput(rng, in.Channels()*in.Spatial(), 2)
			sameBits(t, name, evalOne(t, fused, x), evalOne(t, plain, x))
		}
	}
}
