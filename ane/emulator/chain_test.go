package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// swigluBwdSrc is the SwiGLU backward's elementwise part (lm_kernels.star's ffn_bwd) on slices of one
// input: h1, h3 and dg, [1, 1, R, C] each, to dh1 and dh3 through nine ops, with scalars on either
// side (1 - sig, t + 1) and both results outputs.
const swigluBwdSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 3, %[2]d, %[3]d]> x) {
        tensor<int32, [4]> z = const()[name=string("z"), val=tensor<int32, [4]>([1, 1, %[2]d, %[3]d])];
        tensor<int32, [4]> b1 = const()[name=string("b1"), val=tensor<int32, [4]>([0, 0, 0, 0])];
        tensor<int32, [4]> b3 = const()[name=string("b3"), val=tensor<int32, [4]>([0, 1, 0, 0])];
        tensor<int32, [4]> bg = const()[name=string("bg"), val=tensor<int32, [4]>([0, 2, 0, 0])];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> h1 = slice_by_size(x=x, begin=b1, size=z)[name=string("h1")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> h3 = slice_by_size(x=x, begin=b3, size=z)[name=string("h3")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> dg = slice_by_size(x=x, begin=bg, size=z)[name=string("dg")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> sig = sigmoid(x=h1)[name=string("sig")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> silu = mul(x=h1, y=sig)[name=string("silu")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> dh3 = mul(x=dg, y=silu)[name=string("dh3")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> dsilu = mul(x=dg, y=h3)[name=string("dsilu")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> one_m = sub(x=%[1]s(1.0), y=sig)[name=string("one_m")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> t = mul(x=h1, y=one_m)[name=string("t")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> t1 = add(x=t, y=%[1]s(1.0))[name=string("t1")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> dd = mul(x=sig, y=t1)[name=string("dd")];
        tensor<%[1]s, [1, 1, %[2]d, %[3]d]> dh1 = mul(x=dsilu, y=dd)[name=string("dh1")];
    } -> (dh1, dh3);
}`

// chains counts the steps of k that run a chain, and the ops they run.
func chains(k *Kernel) (steps, ops int) {
	for _, s := range k.steps {
		if s.chain > 0 {
			steps++
			ops += s.chain
		}
	}
	return steps, ops
}

// The SwiGLU backward's nine elementwise ops run as one chain, piece by piece, and give the separate
// ops' bits in both numerics, at sizes below one piece, of several pieces, and with a ragged last
// piece; with CheckNumerics each op stays a step of its own.
func TestChainGivesSeparateOpsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range exactModes {
		for _, sz := range [][2]int{{3, 5}, {16, 1024}, {33, 1001}} {
			t.Run(fmt.Sprintf("%s/%dx%d", m.dt, sz[0], sz[1]), func(t *testing.T) {
				src := fmt.Sprintf(swigluBwdSrc, m.dt, sz[0], sz[1])
				fused, plain := compileSrcBoth(t, src, m.n)
				if steps, ops := chains(fused); steps != 1 || ops != 9 {
					t.Errorf("fused kernel: %d chain steps of %d ops, want 1 of 9", steps, ops)
				}
				if steps, _ := chains(plain); steps != 0 {
					t.Errorf("plain kernel: %d chain steps, want none", steps)
				}
				x := randInput(rng, 3*sz[0]*sz[1], 6)
				sameOutputs(t, "swiglu backward", fused, plain, x)
			})
		}
	}
	p := parseText(t, fmt.Sprintf(swigluBwdSrc, "fp16", 4, 64))
	k, err := compileWith(p.Funcs[0], nil, Options{Numerics: FP16, CheckNumerics: true}, true)
	if err != nil {
		t.Fatal(err)
	}
	if steps, _ := chains(k); steps != 0 {
		t.Errorf("CheckNumerics: %d chain steps, want none (each op reports its own inf or NaN)", steps)
	}
}

// chainable keeps an op out of a chain when it reads or writes, at another index, memory that an op of
// the chain writes; the same elements at the same indices, and memory nothing writes, are fine.
func TestChainableRefusesCrossIndexAccess(t *testing.T) {
	buf := make([]float32, 64)
	other := make([]float32, 64)
	pw := func(out []float32, ins ...access) step {
		return step{pw: &piecewise{n: len(out), out: out, ins: ins, fn: func(lo, hi int) {}}}
	}
	first := []step{pw(buf[:32], access{other[:32], true})}
	cases := []struct {
		name string
		s    step
		want bool
	}{
		{"reads the result at its index", pw(other[32:], access{buf[:32], true}), true},
		{"overwrites the result at its index", pw(buf[:32], access{buf[:32], true}), true},
		{"reads what the chain reads", pw(other[32:], access{other[:32], true}), true},
		{"reads the result shifted", pw(other[32:], access{buf[1:33], true}), false},
		{"reads one element of the result everywhere", pw(other[32:], access{buf[5:6], false}), false},
		{"writes what the chain reads, shifted", pw(other[1:33], access{buf[32:], true}), false},
		{"writes over the chain's input at its index", pw(other[:32], access{buf[32:], true}), true},
		{"writes the result shifted", pw(buf[16:48], access{other[32:], true}), false},
		{"another size", pw(other[32:48], access{buf[32:48], true}), false},
		{"memory apart", pw(buf[32:], access{other[32:], true}), true},
	}
	for _, c := range cases {
		if got := chainable(first, c.s); got != c.want {
			t.Errorf("%s: chainable = %v, want %v", c.name, got, c.want)
		}
	}
}
