package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// concatTargetSrc concatenates, on channels: c, of a value another op also reads (a: copied) and one
// computed in its place (b); e, of two computed in place; f, of a reshape of the input (an alias:
// copied) and one computed in place. Ops read each concat, so none is an output written from its parts.
const concatTargetSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 8, 1, 16]> x) {
        tensor<%[1]s, [1, 8, 1, 16]> a = mul(x=x, y=x)[name=string("a")];
        tensor<%[1]s, [1, 8, 1, 16]> b = add(x=x, y=a)[name=string("b")];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        bool no = const()[name=string("no"), val=bool(false)];
        tensor<%[1]s, [1, 16, 1, 16]> c = concat(values=(a, b), axis=ax, interleave=no)[name=string("c")];
        tensor<int32, [2]> s2 = const()[name=string("s2"), val=tensor<int32, [2]>([16, 16])];
        tensor<%[1]s, [16, 16]> cm = reshape(x=c, shape=s2)[name=string("cm")];
        tensor<%[1]s, [16, 16]> m = matmul(x=cm, y=cm, transpose_x=bool(false), transpose_y=bool(true))[name=string("m")];
        tensor<%[1]s, [1, 8, 1, 16]> d = sub(x=x, y=a)[name=string("d")];
        tensor<%[1]s, [1, 8, 1, 16]> d2 = mul(x=a, y=x)[name=string("d2")];
        tensor<%[1]s, [1, 16, 1, 16]> e = concat(values=(d, d2), axis=ax, interleave=no)[name=string("e")];
        tensor<%[1]s, [1, 16, 1, 16]> ee = exp(x=e)[name=string("ee")];
        tensor<int32, [4]> s4 = const()[name=string("s4"), val=tensor<int32, [4]>([1, 8, 1, 16])];
        tensor<%[1]s, [1, 8, 1, 16]> xr = reshape(x=x, shape=s4)[name=string("xr")];
        tensor<%[1]s, [1, 8, 1, 16]> g = sigmoid(x=a)[name=string("g")];
        tensor<%[1]s, [1, 16, 1, 16]> f = concat(values=(xr, g), axis=ax, interleave=no)[name=string("f")];
        tensor<%[1]s, [1, 16, 1, 16]> ff = tanh(x=f)[name=string("ff")];
    } -> (m, ee, ff);
}
`

// copyingConcats counts k's concat steps that copy.
func copyingConcats(k *Kernel) int { return viewCopies(k, "concat") }

// Parts read by their concat alone are computed in its buffer: e's concat copies nothing and is no
// step, c's and f's copy only a and xr; the outputs have the plain compile's bits.
func TestConcatPartsComputedInPlace(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range exactModes {
		t.Run(m.dt, func(t *testing.T) {
			fused, plain := compileSrcBoth(t, fmt.Sprintf(concatTargetSrc, m.dt), m.n)
			if got := copyingConcats(fused); got != 2 {
				t.Errorf("fused kernel: %d concats copy, want 2 (c and f, for a and xr)", got)
			}
			if got := copyingConcats(plain); got != 3 {
				t.Errorf("plain kernel: %d concats copy, want 3", got)
			}
			for range 3 {
				x := make([]float32, 8*16)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				sameOutputs(t, "outputs", fused, plain, x)
			}
		})
	}
}
