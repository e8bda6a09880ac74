package emulator

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/mil"
)

// gathers counts the slice steps of k that copy their view.
func gathers(k *Kernel) int {
	n := 0
	for _, s := range k.steps {
		if s.op != nil && (s.op.Kind == "slice_by_size" || s.op.Kind == "slice_by_index") && s.run != nil {
			n++
		}
	}
	return n
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
// read twice; blocks
// also read by another op, read as a batch or taken with a stride are gathered.
func TestMatrixViewsExact(t *testing.T) {
	fixedOrderGemm(t)
	rng := rand.New(rand.NewPCG(21, 22))
	for _, mode := range []struct {
		dt string
		n  Numerics
	}{{"fp16", FP16}, {"fp32", FP32}} {
		p, err := mil.Parse("t.mil", []byte(fmt.Sprintf(matrixViewSrc, mode.dt)))
		if err != nil {
			t.Fatal(err)
		}
		if err := mil.Check(p); err != nil {
			t.Fatal(err)
		}
		opts := Options{Numerics: mode.n}
		fused, err := compileWith(p.Funcs[0], nil, opts, true)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := compileWith(p.Funcs[0], nil, opts, false)
		if err != nil {
			t.Fatal(err)
		}
		if f, s := gathers(fused), gathers(plain); f != 3 || s != 11 {
			t.Errorf("%s: %d slices gathered in place, %d separate; want 3 and 11", mode.dt, f, s)
		}
		for _, r := range []float64{0.5, 4} {
			x := randInput(rng, 12*23, r)
			got, want := run(t, fused, x), run(t, plain, x)
			for i := range want {
				sameBits(t, fmt.Sprintf("%s/range %g/output %d", mode.dt, r, i), got[i], want[i])
			}
		}
	}
}
