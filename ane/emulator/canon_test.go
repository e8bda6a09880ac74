package emulator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// formsSrc moves data as the shipped kernels do (nn.star, ane's op-form rule): two sequences' heads
// taken apart by slices of columns joined on the channels (h), put back by slices of channels joined on
// the width (u), and RoPE's pairs split and joined on the last axis between transposes [0, 1, 3, 2] (rp).
// %[1]s is the dtype; %[2]s and %[3]s are the order of h's values.
const formsSrc = `program(1.3)
{
    func main<ios18>(tensor<%[1]s, [1, 8, 1, 12]> x, tensor<%[1]s, [1, 8, 1, 6]> cs) {
        tensor<%[1]s, [1, 8, 1, 6]> s0 = slice_by_size(x=x, begin=tensor<int32, [4]>([0, 0, 0, 0]), size=tensor<int32, [4]>([1, 8, 1, 6]))[name=string("s0")];
        tensor<%[1]s, [1, 2, 4, 6]> r0 = reshape(x=s0, shape=tensor<int32, [4]>([1, 2, 4, 6]))[name=string("r0")];
        tensor<%[1]s, [1, 8, 1, 6]> s1 = slice_by_size(x=x, begin=tensor<int32, [4]>([0, 0, 0, 6]), size=tensor<int32, [4]>([1, 8, 1, 6]))[name=string("s1")];
        tensor<%[1]s, [1, 2, 4, 6]> r1 = reshape(x=s1, shape=tensor<int32, [4]>([1, 2, 4, 6]))[name=string("r1")];
        tensor<%[1]s, [1, 4, 4, 6]> h = concat(values=(%[2]s, %[3]s), axis=int32(1), interleave=bool(false))[name=string("h")];
        tensor<%[1]s, [1, 4, 4, 6]> h2 = mul(x=h, y=h)[name=string("h2")];
        tensor<%[1]s, [1, 2, 4, 6]> u0 = slice_by_size(x=h2, begin=tensor<int32, [4]>([0, 0, 0, 0]), size=tensor<int32, [4]>([1, 2, 4, 6]))[name=string("u0")];
        tensor<%[1]s, [1, 8, 1, 6]> f0 = reshape(x=u0, shape=tensor<int32, [4]>([1, 8, 1, 6]))[name=string("f0")];
        tensor<%[1]s, [1, 2, 4, 6]> u1 = slice_by_size(x=h2, begin=tensor<int32, [4]>([0, 2, 0, 0]), size=tensor<int32, [4]>([1, 2, 4, 6]))[name=string("u1")];
        tensor<%[1]s, [1, 8, 1, 6]> f1 = reshape(x=u1, shape=tensor<int32, [4]>([1, 8, 1, 6]))[name=string("f1")];
        tensor<%[1]s, [1, 8, 1, 12]> u = concat(values=(f0, f1), axis=int32(-1), interleave=bool(false))[name=string("u")];
        tensor<%[1]s, [1, 4, 2, 6]> rr = reshape(x=s1, shape=tensor<int32, [4]>([1, 4, 2, 6]))[name=string("rr")];
        tensor<%[1]s, [1, 4, 6, 2]> t = transpose(x=rr, perm=tensor<int32, [4]>([0, 1, 3, 2]))[name=string("t")];
        tensor<%[1]s, [1, 4, 6, 1]> e = slice_by_size(x=t, begin=tensor<int32, [4]>([0, 0, 0, 0]), size=tensor<int32, [4]>([1, 4, 6, 1]))[name=string("e")];
        tensor<%[1]s, [1, 4, 6, 1]> o = slice_by_size(x=t, begin=tensor<int32, [4]>([0, 0, 0, 1]), size=tensor<int32, [4]>([1, 4, 6, 1]))[name=string("o")];
        tensor<%[1]s, [1, 4, 1, 6]> c = slice_by_size(x=cs, begin=tensor<int32, [4]>([0, 0, 0, 0]), size=tensor<int32, [4]>([1, 4, 1, 6]))[name=string("c")];
        tensor<%[1]s, [1, 4, 6, 1]> cc = reshape(x=c, shape=tensor<int32, [4]>([1, 4, 6, 1]))[name=string("cc")];
        tensor<%[1]s, [1, 4, 1, 6]> sn = slice_by_size(x=cs, begin=tensor<int32, [4]>([0, 4, 0, 0]), size=tensor<int32, [4]>([1, 4, 1, 6]))[name=string("sn")];
        tensor<%[1]s, [1, 4, 6, 1]> ss = reshape(x=sn, shape=tensor<int32, [4]>([1, 4, 6, 1]))[name=string("ss")];
        tensor<%[1]s, [1, 4, 6, 1]> ec = mul(x=e, y=cc)[name=string("ec")];
        tensor<%[1]s, [1, 4, 6, 1]> os = mul(x=o, y=ss)[name=string("os")];
        tensor<%[1]s, [1, 4, 6, 1]> e2 = sub(x=ec, y=os)[name=string("e2")];
        tensor<%[1]s, [1, 4, 6, 1]> es = mul(x=e, y=ss)[name=string("es")];
        tensor<%[1]s, [1, 4, 6, 1]> oc = mul(x=o, y=cc)[name=string("oc")];
        tensor<%[1]s, [1, 4, 6, 1]> o2 = add(x=es, y=oc)[name=string("o2")];
        tensor<%[1]s, [1, 4, 6, 2]> j = concat(values=(e2, o2), axis=int32(3), interleave=bool(false))[name=string("j")];
        tensor<%[1]s, [1, 4, 2, 6]> jt = transpose(x=j, perm=tensor<int32, [4]>([0, 1, 3, 2]))[name=string("jt")];
        tensor<%[1]s, [1, 8, 1, 6]> rp = reshape(x=jt, shape=tensor<int32, [4]>([1, 8, 1, 6]))[name=string("rp")];
        tensor<%[1]s, [1, 8, 1, 18]> out = concat(values=(u, rp), axis=int32(3), interleave=bool(false))[name=string("out")];
    } -> (out);
}
`

// kinds counts fn's ops by kind and, for concats, transposes and slices, by their defining attribute.
func kinds(fn *mil.Func) map[string]int {
	n, consts := map[string]int{}, fn.Consts()
	for _, op := range fn.Ops {
		k := op.Kind
		switch op.Kind {
		case "concat":
			k += fmt.Sprint(consts.ArgValue(op, "axis").Nums)
		case "transpose":
			k += fmt.Sprint(consts.ArgValue(op, "perm").Nums)
		}
		n[k]++
	}
	return n
}

// The rewrites turn the anchors' forms into the fewer ops the fused paths know, and the results keep
// their bits: the fused compile (rewritten) against the unfused one (the program as written), in both
// numerics; values in another order than a rewrite needs are left as they are, and compute the same.
func TestCanonicalFormsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, order := range [][2]string{{"r0", "r1"}, {"r1", "r0"}} {
		for _, mode := range numerics {
			src := fmt.Sprintf(formsSrc, "fp32", order[0], order[1])
			p, err := mil.Parse("forms.mil", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if err := mil.Check(p); err != nil {
				t.Fatal(err)
			}
			fn := p.Main()
			got, before := kinds(canonical(fn)), kinds(fn)
			want := map[string]int{"transpose[0 2 1 3]": 2, "concat[2]": 1, "concat[3]": 1}
			if order[0] == "r1" { // h's columns out of order: h stays a concat; u still regroups
				want = map[string]int{"transpose[0 2 1 3]": 1, "concat[1]": 1, "concat[2]": 1, "concat[3]": 1}
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%v %s: %d ops %s after the rewrites, want %d (all: %v)", order, mode.name, got[k], k, v, got)
				}
			}
			if got["transpose[0 1 3 2]"] != 0 {
				t.Errorf("%v %s: a RoPE transpose is left: %v", order, mode.name, got)
			}
			if kinds(fn)["concat[1]"] != before["concat[1]"] {
				t.Errorf("canonical changed its argument")
			}
			fused, err := compileWith(fn, nil, Options{Numerics: mode.n, Relaxed: true}, true)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := compileWith(fn, nil, Options{Numerics: mode.n, Relaxed: true}, false)
			if err != nil {
				t.Fatal(err)
			}
			x, cs := randInput(rng, 8*12, 3), randInput(rng, 8*6, 1)
			sameBits(t, fmt.Sprintf("%v %s", order, mode.name), run(t, fused, x, cs)[0], run(t, plain, x, cs)[0])
			fused.Close()
			plain.Close()
		}
	}
}

// A rewritten op keeps the place of the op it replaces: an error in it names that op's line.
func TestCanonicalKeepsPositions(t *testing.T) {
	src := fmt.Sprintf(formsSrc, "fp16", "r0", "r1")
	p, err := mil.Parse("forms.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, `name=string("h")`) {
			line = i + 1
		}
	}
	for _, op := range canonical(p.Main()).Ops {
		if len(op.Results) == 1 && strings.HasPrefix(op.Results[0].Name, "h_") && op.Pos.Line != line {
			t.Errorf("%s defined at line %d, want h's line %d", op.Results[0].Name, op.Pos.Line, line)
		}
	}
}
