package emulator

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// gathers counts the slice steps of k that copy their view.
func gathers(k *Kernel) int { return viewCopies(k, "slice_by_size", "slice_by_index") }

// viewCopies counts the steps of k of the view op kinds that copy their view: steps that run and
// compute no product.
func viewCopies(k *Kernel, kinds ...string) int {
	n := 0
	for _, s := range k.steps {
		if s.op != nil && slices.Contains(kinds, s.op.Kind) && s.run != nil && s.flops == 0 {
			n++
		}
	}
	return n
}

// exactModes are the numerics the exactness tests run in, with their MIL dtype.
var exactModes = []struct {
	dt string
	n  Numerics
}{{"fp16", FP16}, {"fp32", FP32}}

// compileSrcBoth parses and checks MIL source src and compiles it with fusions (fused) and without
// (plain, every op on its own and every view gathered) in numerics n.
func compileSrcBoth(t *testing.T, src string, n Numerics) (fused, plain *Kernel) {
	t.Helper()
	p := parseText(t, src)
	err := mil.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Numerics: n}
	if fused, err = compileWith(p.Funcs[0], nil, opts, true); err != nil {
		t.Fatal(err)
	}
	if plain, err = compileWith(p.Funcs[0], nil, opts, false); err != nil {
		t.Fatal(err)
	}
	return fused, plain
}

// sameOutputs evaluates fused and plain on inputs ins and fails unless every output has the same bits.
func sameOutputs(t *testing.T, what string, fused, plain *Kernel, ins ...[]float32) {
	t.Helper()
	got, want := run(t, fused, ins...), run(t, plain, ins...)
	for i := range want {
		sameBits(t, fmt.Sprintf("%s/output %d", what, i), got[i], want[i])
	}
}

// matrixViewSrc carves blocks at odd offsets out of one packed [1, 12, 1, 23] input and multiplies
// them: a rank-2 block read transposed (a), a rank-4 block (b), a block read as y (c), one column (d,
// a 6 x 1 matrix with leading dimension 23), a block read as transposed y (e), a block read through a
// squeeze (f), one read by two products (g), one read through a folded transpose (k) and, gathered, a block another op also reads (h), a block
// read as a batch of two matrices (i) and a block taken with a stride (j).
const matrixViewSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 12, 1, 23]> x) {
        tensor<int32, [4]> ab = const()[name=string("ab"), val=tensor<int32, [4]>([0, 1, 0, 3])];
        tensor<int32, [4]> az = const()[name=string("az"), val=tensor<int32, [4]>([1, 7, 1, 6])];
        tensor<%[1]s, [1, 7, 1, 6]> as = slice_by_size(x=x, begin=ab, size=az)[name=string("as")];
        tensor<int32, [2]> a2 = const()[name=string("a2"), val=tensor<int32, [2]>([7, 6])];
        tensor<%[1]s, [7, 6]> a = reshape(x=as, shape=a2)[name=string("a")];
        tensor<int32, [4]> bb = const()[name=string("bb"), val=tensor<int32, [4]>([0, 1, 0, 11])];
        tensor<int32, [4]> bz = const()[name=string("bz"), val=tensor<int32, [4]>([1, 7, 1, 5])];
        tensor<%[1]s, [1, 7, 1, 5]> bs = slice_by_size(x=x, begin=bb, size=bz)[name=string("bs")];
        tensor<int32, [4]> b4 = const()[name=string("b4"), val=tensor<int32, [4]>([1, 1, 7, 5])];
        tensor<%[1]s, [1, 1, 7, 5]> b = reshape(x=bs, shape=b4)[name=string("b")];
        tensor<%[1]s, [1, 1, 6, 5]> m1 = matmul(x=a, y=b, transpose_x=bool(true), transpose_y=bool(false))[name=string("m1")];
        tensor<int32, [4]> cb = const()[name=string("cb"), val=tensor<int32, [4]>([0, 0, 0, 16])];
        tensor<int32, [4]> cz = const()[name=string("cz"), val=tensor<int32, [4]>([1, 5, 1, 7])];
        tensor<%[1]s, [1, 5, 1, 7]> cs = slice_by_size(x=x, begin=cb, size=cz)[name=string("cs")];
        tensor<int32, [2]> c2 = const()[name=string("c2"), val=tensor<int32, [2]>([5, 7])];
        tensor<%[1]s, [5, 7]> c = reshape(x=cs, shape=c2)[name=string("c")];
        tensor<%[1]s, [1, 1, 6, 7]> m2 = matmul(x=m1, y=c)[name=string("m2")];
        tensor<int32, [4]> db = const()[name=string("db"), val=tensor<int32, [4]>([0, 3, 0, 22])];
        tensor<int32, [4]> dz = const()[name=string("dz"), val=tensor<int32, [4]>([1, 6, 1, 1])];
        tensor<%[1]s, [1, 6, 1, 1]> ds = slice_by_size(x=x, begin=db, size=dz)[name=string("ds")];
        tensor<int32, [2]> d2 = const()[name=string("d2"), val=tensor<int32, [2]>([6, 1])];
        tensor<%[1]s, [6, 1]> d = reshape(x=ds, shape=d2)[name=string("d")];
        tensor<%[1]s, [1, 1, 1, 7]> m3 = matmul(x=d, y=m2, transpose_x=bool(true), transpose_y=bool(false))[name=string("m3")];
        tensor<int32, [4]> eb = const()[name=string("eb"), val=tensor<int32, [4]>([0, 4, 0, 1])];
        tensor<int32, [4]> ez = const()[name=string("ez"), val=tensor<int32, [4]>([1, 4, 1, 7])];
        tensor<%[1]s, [1, 4, 1, 7]> es = slice_by_size(x=x, begin=eb, size=ez)[name=string("es")];
        tensor<int32, [2]> e2 = const()[name=string("e2"), val=tensor<int32, [2]>([4, 7])];
        tensor<%[1]s, [4, 7]> e = reshape(x=es, shape=e2)[name=string("e")];
        tensor<%[1]s, [1, 1, 6, 4]> m4 = matmul(x=m2, y=e, transpose_x=bool(false), transpose_y=bool(true))[name=string("m4")];
        tensor<int32, [4]> fb = const()[name=string("fb"), val=tensor<int32, [4]>([0, 5, 0, 9])];
        tensor<int32, [4]> fz = const()[name=string("fz"), val=tensor<int32, [4]>([1, 4, 1, 6])];
        tensor<%[1]s, [1, 4, 1, 6]> fs = slice_by_size(x=x, begin=fb, size=fz)[name=string("fs")];
        tensor<int32, [3]> f3 = const()[name=string("f3"), val=tensor<int32, [3]>([1, 4, 6])];
        tensor<%[1]s, [1, 4, 6]> f = reshape(x=fs, shape=f3)[name=string("f")];
        tensor<int32, [1]> f0 = const()[name=string("f0"), val=tensor<int32, [1]>([0])];
        tensor<%[1]s, [4, 6]> fq = squeeze(x=f, axes=f0)[name=string("fq")];
        tensor<%[1]s, [1, 1, 6, 6]> m5 = matmul(x=m4, y=fq)[name=string("m5")];
        tensor<int32, [4]> gb = const()[name=string("gb"), val=tensor<int32, [4]>([0, 6, 0, 2])];
        tensor<int32, [4]> gz = const()[name=string("gz"), val=tensor<int32, [4]>([1, 6, 1, 6])];
        tensor<%[1]s, [1, 6, 1, 6]> gs = slice_by_size(x=x, begin=gb, size=gz)[name=string("gs")];
        tensor<int32, [2]> g2 = const()[name=string("g2"), val=tensor<int32, [2]>([6, 6])];
        tensor<%[1]s, [6, 6]> g = reshape(x=gs, shape=g2)[name=string("g")];
        tensor<%[1]s, [1, 1, 6, 6]> m6 = matmul(x=m5, y=g)[name=string("m6")];
        tensor<%[1]s, [1, 1, 6, 6]> m7 = matmul(x=g, y=m6, transpose_x=bool(true), transpose_y=bool(false))[name=string("m7")];
        tensor<int32, [4]> hb = const()[name=string("hb"), val=tensor<int32, [4]>([0, 2, 0, 4])];
        tensor<int32, [4]> hz = const()[name=string("hz"), val=tensor<int32, [4]>([1, 6, 1, 6])];
        tensor<%[1]s, [1, 6, 1, 6]> hs = slice_by_size(x=x, begin=hb, size=hz)[name=string("hs")];
        tensor<int32, [4]> h4 = const()[name=string("h4"), val=tensor<int32, [4]>([1, 1, 6, 6])];
        tensor<%[1]s, [1, 1, 6, 6]> h = reshape(x=hs, shape=h4)[name=string("h")];
        tensor<%[1]s, [1, 1, 6, 6]> hr = relu(x=h)[name=string("hr")];
        tensor<%[1]s, [1, 1, 6, 6]> m8 = matmul(x=m7, y=h)[name=string("m8")];
        tensor<%[1]s, [1, 1, 6, 6]> m9 = add(x=m8, y=hr)[name=string("m9")];
        tensor<int32, [4]> ib = const()[name=string("ib"), val=tensor<int32, [4]>([0, 0, 0, 10])];
        tensor<int32, [4]> iz = const()[name=string("iz"), val=tensor<int32, [4]>([1, 12, 1, 6])];
        tensor<%[1]s, [1, 12, 1, 6]> is = slice_by_size(x=x, begin=ib, size=iz)[name=string("is")];
        tensor<int32, [4]> i4 = const()[name=string("i4"), val=tensor<int32, [4]>([1, 2, 6, 6])];
        tensor<%[1]s, [1, 2, 6, 6]> i = reshape(x=is, shape=i4)[name=string("i")];
        tensor<%[1]s, [1, 2, 6, 6]> m10 = matmul(x=m9, y=i)[name=string("m10")];
        tensor<int32, [4]> jb = const()[name=string("jb"), val=tensor<int32, [4]>([0, 0, 0, 1])];
        tensor<int32, [4]> je = const()[name=string("je"), val=tensor<int32, [4]>([1, 12, 1, 13])];
        tensor<int32, [4]> jst = const()[name=string("jst"), val=tensor<int32, [4]>([1, 2, 1, 2])];
        tensor<%[1]s, [1, 6, 1, 6]> js = slice_by_index(x=x, begin=jb, end=je, stride=jst)[name=string("js")];
        tensor<int32, [2]> j2 = const()[name=string("j2"), val=tensor<int32, [2]>([6, 6])];
        tensor<%[1]s, [6, 6]> j = reshape(x=js, shape=j2)[name=string("j")];
        tensor<%[1]s, [1, 2, 6, 6]> m11 = matmul(x=m10, y=j)[name=string("m11")];
        tensor<int32, [4]> kb = const()[name=string("kb"), val=tensor<int32, [4]>([0, 5, 0, 17])];
        tensor<int32, [4]> kz = const()[name=string("kz"), val=tensor<int32, [4]>([1, 6, 1, 5])];
        tensor<%[1]s, [1, 6, 1, 5]> ks = slice_by_size(x=x, begin=kb, size=kz)[name=string("ks")];
        tensor<int32, [2]> k2 = const()[name=string("k2"), val=tensor<int32, [2]>([6, 5])];
        tensor<%[1]s, [6, 5]> k = reshape(x=ks, shape=k2)[name=string("k")];
        tensor<int32, [2]> kp = const()[name=string("kp"), val=tensor<int32, [2]>([1, 0])];
        tensor<%[1]s, [5, 6]> kt = transpose(x=k, perm=kp)[name=string("kt")];
        tensor<%[1]s, [1, 1, 5, 6]> m12 = matmul(x=kt, y=m6)[name=string("m12")];
        tensor<int32, [4]> o4 = const()[name=string("o4"), val=tensor<int32, [4]>([1, 5, 1, 6])];
        tensor<%[1]s, [1, 5, 1, 6]> out4 = reshape(x=m12, shape=o4)[name=string("out4")];
        tensor<int32, [4]> os = const()[name=string("os"), val=tensor<int32, [4]>([1, 12, 1, 6])];
        tensor<%[1]s, [1, 12, 1, 6]> out = reshape(x=m11, shape=os)[name=string("out")];
        tensor<int32, [4]> o3 = const()[name=string("o3"), val=tensor<int32, [4]>([1, 1, 1, 7])];
        tensor<%[1]s, [1, 1, 1, 7]> out3 = reshape(x=m3, shape=o3)[name=string("out3")];
    } -> (out, out3, out4);
}
`

// Blocks of a packed input that only matmuls read are read in place, with the bits of their gathered
// copies: transposed or not, as x or y, one column, through reshapes, squeezes and folded transposes,
// read twice, read as a batch; blocks also read by another op or taken with a stride are gathered.
func TestViewsInPlaceExact(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, mode := range exactModes {
		fused, plain := compileSrcBoth(t, fmt.Sprintf(matrixViewSrc, mode.dt), mode.n)
		if f, s := gathers(fused), gathers(plain); f != 2 || s != 11 {
			t.Errorf("%s: %d slices gathered in place, %d separate; want 2 and 11", mode.dt, f, s)
		}
		for _, r := range []float64{0.5, 4} {
			sameOutputs(t, fmt.Sprintf("%s/range %g", mode.dt, r), fused, plain, randInput(rng, 12*23, r))
		}
	}
}

// binaryViewSrc carves blocks out of one packed [1, 10, 1, 70] input for elementwise binary ops: two
// blocks multiplied (p, q: rows of 40, the vector code), a block of short rows plus a broadcast row
// (r), the even and odd channels of pairs of an op's result (ev, od, as RoPE takes them), a block read
// through a reshape (u) and one read by a matmul and an add (w); gathered: one column (cl) and a block
// whose reshape merges its rows (v).
const binaryViewSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 10, 1, 70]> x) {
        tensor<int32, [4]> pb = const()[name=string("pb"), val=tensor<int32, [4]>([0, 1, 0, 3])];
        tensor<int32, [4]> pz = const()[name=string("pz"), val=tensor<int32, [4]>([1, 4, 1, 40])];
        tensor<%[1]s, [1, 4, 1, 40]> p = slice_by_size(x=x, begin=pb, size=pz)[name=string("p")];
        tensor<int32, [4]> qb = const()[name=string("qb"), val=tensor<int32, [4]>([0, 5, 0, 20])];
        tensor<%[1]s, [1, 4, 1, 40]> q = slice_by_size(x=x, begin=qb, size=pz)[name=string("q")];
        tensor<%[1]s, [1, 4, 1, 40]> s1 = mul(x=p, y=q)[name=string("s1")];
        tensor<int32, [4]> rb = const()[name=string("rb"), val=tensor<int32, [4]>([0, 0, 0, 50])];
        tensor<int32, [4]> rz = const()[name=string("rz"), val=tensor<int32, [4]>([1, 4, 1, 7])];
        tensor<%[1]s, [1, 4, 1, 7]> r = slice_by_size(x=x, begin=rb, size=rz)[name=string("r")];
        tensor<%[1]s, [1, 1, 1, 7]> c0 = const()[name=string("c0"), val=tensor<%[1]s, [1, 1, 1, 7]>([0.5, -1, 2, 0.25, 3, -0.75, 1.5])];
        tensor<%[1]s, [1, 4, 1, 7]> s2 = add(x=c0, y=r)[name=string("s2")];
        tensor<int32, [4]> eb = const()[name=string("eb"), val=tensor<int32, [4]>([0, 2, 0, 40])];
        tensor<int32, [4]> ez = const()[name=string("ez"), val=tensor<int32, [4]>([1, 8, 1, 30])];
        tensor<%[1]s, [1, 8, 1, 30]> es = slice_by_size(x=x, begin=eb, size=ez)[name=string("es")];
        tensor<%[1]s, [1, 8, 1, 30]> e = relu(x=es)[name=string("e")];
        tensor<int32, [4]> e4 = const()[name=string("e4"), val=tensor<int32, [4]>([1, 4, 2, 30])];
        tensor<%[1]s, [1, 4, 2, 30]> er = reshape(x=e, shape=e4)[name=string("er")];
        tensor<int32, [4]> b0 = const()[name=string("b0"), val=tensor<int32, [4]>([0, 0, 0, 0])];
        tensor<int32, [4]> b1 = const()[name=string("b1"), val=tensor<int32, [4]>([0, 0, 1, 0])];
        tensor<int32, [4]> hz = const()[name=string("hz"), val=tensor<int32, [4]>([1, 4, 1, 30])];
        tensor<%[1]s, [1, 4, 1, 30]> ev = slice_by_size(x=er, begin=b0, size=hz)[name=string("ev")];
        tensor<%[1]s, [1, 4, 1, 30]> od = slice_by_size(x=er, begin=b1, size=hz)[name=string("od")];
        tensor<%[1]s, [1, 4, 1, 30]> s4 = sub(x=ev, y=od)[name=string("s4")];
        tensor<int32, [4]> ub = const()[name=string("ub"), val=tensor<int32, [4]>([0, 2, 0, 10])];
        tensor<int32, [4]> uz = const()[name=string("uz"), val=tensor<int32, [4]>([1, 6, 1, 8])];
        tensor<%[1]s, [1, 6, 1, 8]> u = slice_by_size(x=x, begin=ub, size=uz)[name=string("u")];
        tensor<int32, [3]> u3 = const()[name=string("u3"), val=tensor<int32, [3]>([1, 6, 8])];
        tensor<%[1]s, [1, 6, 8]> ur = reshape(x=u, shape=u3)[name=string("ur")];
        tensor<%[1]s, [1, 6, 8]> s5 = maximum(x=ur, y=%[2]s)[name=string("s5")];
        tensor<int32, [4]> wb = const()[name=string("wb"), val=tensor<int32, [4]>([0, 3, 0, 31])];
        tensor<int32, [4]> wz = const()[name=string("wz"), val=tensor<int32, [4]>([1, 6, 1, 6])];
        tensor<%[1]s, [1, 6, 1, 6]> ws = slice_by_size(x=x, begin=wb, size=wz)[name=string("ws")];
        tensor<int32, [2]> w2 = const()[name=string("w2"), val=tensor<int32, [2]>([6, 6])];
        tensor<%[1]s, [6, 6]> w = reshape(x=ws, shape=w2)[name=string("w")];
        tensor<%[1]s, [6, 6]> wm = matmul(x=w, y=w)[name=string("wm")];
        tensor<%[1]s, [6, 6]> s6 = add(x=wm, y=w)[name=string("s6")];
        tensor<int32, [4]> cb = const()[name=string("cb"), val=tensor<int32, [4]>([0, 0, 0, 69])];
        tensor<int32, [4]> cz = const()[name=string("cz"), val=tensor<int32, [4]>([1, 10, 1, 1])];
        tensor<%[1]s, [1, 10, 1, 1]> cl = slice_by_size(x=x, begin=cb, size=cz)[name=string("cl")];
        tensor<%[1]s, [1, 10, 1, 1]> s7 = mul(x=cl, y=cl)[name=string("s7")];
        tensor<int32, [4]> vb = const()[name=string("vb"), val=tensor<int32, [4]>([0, 4, 0, 61])];
        tensor<int32, [4]> vz = const()[name=string("vz"), val=tensor<int32, [4]>([1, 4, 1, 6])];
        tensor<%[1]s, [1, 4, 1, 6]> vs = slice_by_size(x=x, begin=vb, size=vz)[name=string("vs")];
        tensor<int32, [3]> v3 = const()[name=string("v3"), val=tensor<int32, [3]>([1, 2, 12])];
        tensor<%[1]s, [1, 2, 12]> v = reshape(x=vs, shape=v3)[name=string("v")];
        tensor<%[1]s, [1, 2, 12]> s8 = mul(x=v, y=v)[name=string("s8")];
        tensor<int32, [4]> o5 = const()[name=string("o5"), val=tensor<int32, [4]>([1, 6, 1, 8])];
        tensor<%[1]s, [1, 6, 1, 8]> out5 = reshape(x=s5, shape=o5)[name=string("out5")];
        tensor<int32, [4]> o6 = const()[name=string("o6"), val=tensor<int32, [4]>([1, 6, 1, 6])];
        tensor<%[1]s, [1, 6, 1, 6]> out6 = reshape(x=s6, shape=o6)[name=string("out6")];
        tensor<int32, [4]> o8 = const()[name=string("o8"), val=tensor<int32, [4]>([1, 2, 1, 12])];
        tensor<%[1]s, [1, 2, 1, 12]> out8 = reshape(x=s8, shape=o8)[name=string("out8")];
    } -> (s1, s2, s4, out5, out6, s7, out8);
}
`

// Blocks that elementwise binary ops read are read in place, with the bits of their gathered copies:
// long and short rows, broadcast against a constant, of an op's result at a stride of two rows,
// through a reshape, also read by a product; one column and a block whose rows a reshape merges are
// gathered.
func TestBinaryViewsInPlaceExact(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(23, 24))
	for _, mode := range exactModes {
		fused, plain := compileSrcBoth(t, fmt.Sprintf(binaryViewSrc, mode.dt, mode.dt+"(0.125)"), mode.n)
		if f, s := gathers(fused), gathers(plain); f != 3 || s != 10 {
			t.Errorf("%s: %d slices gathered in place, %d separate; want 3 and 10", mode.dt, f, s)
		}
		for _, r := range []float64{0.5, 300} {
			sameOutputs(t, fmt.Sprintf("%s/range %g", mode.dt, r), fused, plain, randInput(rng, 10*70, r))
		}
	}
}

// rowSplit finds the trailing dims that hold one row.
func TestRowSplit(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		cols  int
		want  int
	}{
		{[]int{1, 128, 1, 1024}, 1024, 3},
		{[]int{1, 6, 8}, 8, 2},
		{[]int{2, 3, 4}, 12, 1},
		{[]int{2, 3, 4}, 24, 0},
		{[]int{1, 2, 12}, 6, -1},
		{[]int{4, 1}, 1, 2},
		{[]int{4, 1, 1}, 4, 0},
		{[]int{3, 5}, 30, -1},
	} {
		if got := rowSplit(tc.shape, tc.cols); got != tc.want {
			t.Errorf("rowSplit(%v, %d) = %d, want %d", tc.shape, tc.cols, got, tc.want)
		}
	}
}

// headsSrc splits q and k [1, 8, 1, 12] (2 sequences of 6 side by side, 2 heads of 4 channels) into
// per sequence and head matrices as the language model's kernels do: reshape, transpose, reshape and
// a transpose folded into the products. The transposes of q and k are read in place as batches of 4
// matrices (at offsets 0, 24, 6, 30): by the fused causal attention and by a plain product. kx, also
// read by a relu, is gathered.
const headsSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 8, 1, 12]> q, tensor<%[1]s, [1, 8, 1, 12]> k) {
        tensor<int32, [4]> b4 = const()[name=string("b4"), val=tensor<int32, [4]>([1, 8, 2, 6])];
        tensor<int32, [4]> bp = const()[name=string("bp"), val=tensor<int32, [4]>([0, 2, 1, 3])];
        tensor<int32, [4]> r4 = const()[name=string("r4"), val=tensor<int32, [4]>([1, 4, 4, 6])];
        tensor<int32, [4]> tp = const()[name=string("tp"), val=tensor<int32, [4]>([0, 1, 3, 2])];
        tensor<%[1]s, [1, 8, 2, 6]> qb = reshape(x=q, shape=b4)[name=string("qb")];
        tensor<%[1]s, [1, 2, 8, 6]> qx = transpose(x=qb, perm=bp)[name=string("qx")];
        tensor<%[1]s, [1, 4, 4, 6]> qr = reshape(x=qx, shape=r4)[name=string("qr")];
        tensor<%[1]s, [1, 4, 6, 4]> qt = transpose(x=qr, perm=tp)[name=string("qt")];
        tensor<%[1]s, [1, 8, 2, 6]> kb = reshape(x=k, shape=b4)[name=string("kb")];
        tensor<%[1]s, [1, 2, 8, 6]> kx = transpose(x=kb, perm=bp)[name=string("kx")];
        tensor<%[1]s, [1, 4, 4, 6]> kr = reshape(x=kx, shape=r4)[name=string("kr")];
        tensor<%[1]s, [1, 4, 6, 4]> kt = transpose(x=kr, perm=tp)[name=string("kt")];
        tensor<%[1]s, [1, 4, 6, 6]> sc = matmul(x=qt, y=kt, transpose_x=bool(false), transpose_y=bool(true))[name=string("sc")];
        tensor<%[1]s, [1, 4, 6, 6]> scs = mul(x=sc, y=%[2]s)[name=string("scs")];
        tensor<%[1]s, [1, 1, 6, 6]> mask = const()[name=string("mask"), val=tensor<%[1]s, [1, 1, 6, 6]>([%[3]s])];
        tensor<%[1]s, [1, 4, 6, 6]> scm = add(x=scs, y=mask)[name=string("scm")];
        tensor<int32, []> ax = const()[name=string("ax"), val=int32(-1)];
        tensor<%[1]s, [1, 4, 6, 6]> probs = softmax(x=scm, axis=ax)[name=string("probs")];
        tensor<%[1]s, [1, 4, 6, 6]> vv = matmul(x=qr, y=kr, transpose_x=bool(true), transpose_y=bool(false))[name=string("vv")];
        tensor<%[1]s, [1, 2, 8, 6]> kz = relu(x=kx)[name=string("kz")];
        tensor<int32, [4]> o4 = const()[name=string("o4"), val=tensor<int32, [4]>([1, 24, 1, 6])];
        tensor<%[1]s, [1, 24, 1, 6]> out = reshape(x=probs, shape=o4)[name=string("out")];
        tensor<%[1]s, [1, 24, 1, 6]> out2 = reshape(x=vv, shape=o4)[name=string("out2")];
        tensor<int32, [4]> o3 = const()[name=string("o3"), val=tensor<int32, [4]>([1, 16, 1, 6])];
        tensor<%[1]s, [1, 16, 1, 6]> out3 = reshape(x=kz, shape=o3)[name=string("out3")];
    } -> (out, out2, out3);
}
`

// Per-head matrices taken out of a [channels, sequences x positions] activation are read in place as
// batches by the fused causal attention and by a plain product, with the bits of the gathered copies.
func TestHeadsInPlaceExact(t *testing.T) {
	fixedOrderGemm(t)
	var mask []string
	for i := range 6 {
		for j := range 6 {
			if j <= i {
				mask = append(mask, "0")
			} else {
				mask = append(mask, "-65504")
			}
		}
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for _, mode := range exactModes {
		fused, plain := compileSrcBoth(t, fmt.Sprintf(headsSrc, mode.dt, mode.dt+"(0.5)", strings.Join(mask, ", ")), mode.n)
		if f, s := copies(fused), copies(plain); f != 1 || s != 4 {
			t.Errorf("%s: %d transposes copied fused, %d separate; want 1 and 4", mode.dt, f, s)
		}
		for _, s := range fused.steps {
			if s.result == "sc" {
				t.Errorf("%s: the scores are a step of their own: the causal attention did not fuse", mode.dt)
			}
		}
		for _, r := range []float64{0.5, 6} {
			sameOutputs(t, fmt.Sprintf("%s/range %g", mode.dt, r), fused, plain, randInput(rng, 96, r), randInput(rng, 96, r))
		}
	}
}
