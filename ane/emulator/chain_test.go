package emulator

import (
	"fmt"
	"math/rand/v2"
	"strings"
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

// joined keeps an op out of a chain when it reads or writes, in another unit, memory that an op of
// the chain writes; the same elements in the same units, and memory nothing writes, are fine. Ops of
// other sizes join when their units cut the chain's.
func TestJoinedRefusesCrossUnitAccess(t *testing.T) {
	buf := make([]float32, 64)
	other := make([]float32, 64)
	fine := func(out []float32, ins ...access) *piecewise {
		return &piecewise{n: len(out), fine: true, out: flat(out), ins: ins, fn: func(lo, hi int) {}}
	}
	rows := func(n int, out access, ins ...access) *piecewise {
		return &piecewise{n: n, out: out, ins: ins, fn: func(lo, hi int) {}}
	}
	cases := []struct {
		name string
		p    *piecewise
		want bool
	}{
		{"reads the result at its index", fine(other[32:], flat(buf[:32])), true},
		{"overwrites the result at its index", fine(buf[:32], flat(buf[:32])), true},
		{"reads what the chain reads", fine(other[32:], flat(other[:32])), true},
		{"reads the result shifted", fine(other[32:], flat(buf[1:33])), false},
		{"reads one element of the result everywhere", fine(other[32:], access{buf[5:6], 0}), false},
		{"writes what the chain reads, shifted", fine(other[1:33], flat(buf[32:])), false},
		{"writes over the chain's input at its index", fine(other[:32], flat(buf[32:])), true},
		{"writes the result shifted", fine(buf[16:48], flat(other[32:])), false},
		{"half the size, apart", fine(other[32:48], flat(buf[32:48])), true},
		{"half the size, reading the result", fine(other[32:48], flat(buf[:16])), false},
		{"rows of the result", rows(4, access{other[32:], 8}, access{buf[:32], 8}), true},
		{"rows of the result, shifted", rows(4, access{other[32:], 8}, access{buf[8:40], 8}), false},
		{"strided rows over the result", rows(4, access{other[32:], 8}, access{buf[:40], 0}), false},
		{"strided rows elsewhere", rows(4, access{other[32:], 8}, access{buf[32:], 0}), true},
		{"rows that do not cut the chain", rows(3, access{other[32:56], 8}, access{buf[32:56], 8}), false},
	}
	for _, c := range cases {
		first := fine(buf[:32], flat(other[:32]))
		first.scale = 1
		if got := joined([]*piecewise{first}, c.p) != nil; got != c.want {
			t.Errorf("%s: joined = %v, want %v", c.name, got, c.want)
		}
	}
}

// ropeSrc is RoPE's rotation as lm_kernels.star writes it: the even and odd channels of x (strided
// slices of a [1, h, 2, S] view) times cos and sin rows sliced out of the same input, the two sums
// concatenated back into pairs: six binary ops over strided rows and a concat, one chain.
const ropeSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, %[2]d, 1, %[3]d]> x) {
        tensor<int32, [4]> rs = const()[name=string("rs"), val=tensor<int32, [4]>([1, %[4]d, 2, %[3]d])];
        tensor<int32, [4]> hz = const()[name=string("hz"), val=tensor<int32, [4]>([1, %[4]d, 1, %[3]d])];
        tensor<int32, [4]> b0 = const()[name=string("b0"), val=tensor<int32, [4]>([0, 0, 0, 0])];
        tensor<int32, [4]> b1 = const()[name=string("b1"), val=tensor<int32, [4]>([0, 0, 1, 0])];
        tensor<int32, [4]> bc = const()[name=string("bc"), val=tensor<int32, [4]>([0, %[2]d, 0, 0])];
        tensor<int32, [4]> bs = const()[name=string("bs"), val=tensor<int32, [4]>([0, %[5]d, 0, 0])];
        tensor<int32, [4]> xz = const()[name=string("xz"), val=tensor<int32, [4]>([1, %[2]d, 1, %[3]d])];
        tensor<%[1]s, [1, %[2]d, 1, %[3]d]> q = slice_by_size(x=x, begin=b0, size=xz)[name=string("q")];
        tensor<%[1]s, [1, %[4]d, 2, %[3]d]> r = reshape(x=q, shape=rs)[name=string("r")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> e = slice_by_size(x=r, begin=b0, size=hz)[name=string("e")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> o = slice_by_size(x=r, begin=b1, size=hz)[name=string("o")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> c = slice_by_size(x=x, begin=bc, size=hz)[name=string("c")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> sn = slice_by_size(x=x, begin=bs, size=hz)[name=string("sn")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> ec = mul(x=e, y=c)[name=string("ec")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> es = mul(x=e, y=sn)[name=string("es")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> oc = mul(x=o, y=c)[name=string("oc")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> os = mul(x=o, y=sn)[name=string("os")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> e2 = sub(x=ec, y=os)[name=string("e2")];
        tensor<%[1]s, [1, %[4]d, 1, %[3]d]> o2 = add(x=es, y=oc)[name=string("o2")];
        tensor<%[1]s, [1, %[4]d, 2, %[3]d]> j = concat(values=(e2, o2), axis=int32(2), interleave=bool(false))[name=string("j")];
        tensor<int32, [4]> fz = const()[name=string("fz"), val=tensor<int32, [4]>([1, %[2]d, 1, %[3]d])];
        tensor<%[1]s, [1, %[2]d, 1, %[3]d]> rot = reshape(x=j, shape=fz)[name=string("rot")];
        tensor<%[1]s, [1, %[2]d, 1, %[3]d]> y = mul(x=rot, y=%[1]s(2.0))[name=string("y")];
    } -> (y);
}`

// RoPE's rotation runs as one chain of rows (the concat included) and gives the separate ops' bits.
func TestRopeChainGivesSeparateOpsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, m := range exactModes {
		for _, sz := range [][2]int{{4, 8}, {16, 100}, {64, 1024}} {
			rows, s := sz[0], sz[1]
			t.Run(fmt.Sprintf("%s/%dx%d", m.dt, rows, s), func(t *testing.T) {
				// x: rows channels of q, then rows/2 of cos and rows/2 of sin
				src := fmt.Sprintf(ropeSrc, m.dt, rows, s, rows/2, rows+rows/2)
				src = strings.Replace(src, fmt.Sprintf("[1, %d, 1, %d]> x", rows, s), fmt.Sprintf("[1, %d, 1, %d]> x", 2*rows, s), 1)
				fused, plain := compileSrcBoth(t, src, m.n)
				if steps, ops := chains(fused); steps != 1 || ops < 7 {
					t.Errorf("fused kernel: %d chain steps of %d ops, want 1 of at least 7", steps, ops)
				}
				sameOutputs(t, "rope", fused, plain, randInput(rng, 2*rows*s, 4))
			})
		}
	}
}
