package emulator

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomChainProgram writes a random program of elementwise ops, views and concats over one [1, C, 1, S]
// input, the kinds of step that chain: sigmoids, sums and products of values (or of a value and a
// scalar), the even and odd channels of a pair view as strided rows, a concat that rejoins pairs,
// channel halves. Values are "a" ([1, C, 1, S]) or "b" ([1, C/2, 1, S]); the planner reuses their
// buffers as they die, which is what chains must not trip over.
func randomChainProgram(rng *rand.Rand, dt string, c, s, ops int) string {
	var b strings.Builder
	ta, tb, tp := fmt.Sprintf("tensor<%s, [1, %d, 1, %d]>", dt, c, s), fmt.Sprintf("tensor<%s, [1, %d, 1, %d]>", dt, c/2, s),
		fmt.Sprintf("tensor<%s, [1, %d, 2, %d]>", dt, c/2, s)
	fmt.Fprintf(&b, "program(1.3)\n{\n    func main<ios18>(%s x) {\n", ta)
	cst := func(name string, v [4]int) {
		fmt.Fprintf(&b, "        tensor<int32, [4]> %s = const()[name=string(\"%s\"), val=tensor<int32, [4]>([%d, %d, %d, %d])];\n", name, name, v[0], v[1], v[2], v[3])
	}
	cst("pr", [4]int{1, c / 2, 2, s})
	cst("fa", [4]int{1, c, 1, s})
	cst("hz", [4]int{1, c / 2, 1, s})
	cst("z0", [4]int{0, 0, 0, 0})
	cst("z1", [4]int{0, 0, 1, 0})
	cst("zh", [4]int{0, c / 2, 0, 0})
	as, bs := []string{"x"}, []string{}
	n := 0
	name := func() string { n++; return fmt.Sprintf("v%d", n) }
	pick := func(l []string) string { return l[rng.IntN(len(l))] }
	op := func(t, v, expr string) { fmt.Fprintf(&b, "        %s %s = %s[name=string(\"%s\")];\n", t, v, expr, v) }
	bins := []string{"add", "sub", "mul"}
	for len(as)+len(bs) < ops+1 {
		switch k := rng.IntN(7); {
		case k == 0: // sigmoid of either class
			if len(bs) > 0 && rng.IntN(2) == 0 {
				v := name()
				op(tb, v, fmt.Sprintf("sigmoid(x=%s)", pick(bs)))
				bs = append(bs, v)
			} else {
				v := name()
				op(ta, v, fmt.Sprintf("sigmoid(x=%s)", pick(as)))
				as = append(as, v)
			}
		case k <= 2: // two values of a class
			if len(bs) > 1 && rng.IntN(2) == 0 {
				v := name()
				op(tb, v, fmt.Sprintf("%s(x=%s, y=%s)", pick(bins), pick(bs), pick(bs)))
				bs = append(bs, v)
			} else {
				v := name()
				op(ta, v, fmt.Sprintf("%s(x=%s, y=%s)", pick(bins), pick(as), pick(as)))
				as = append(as, v)
			}
		case k == 3: // a value and a scalar, either side
			x, sc := pick(as), fmt.Sprintf("%s(%.2f)", dt, 0.5+rng.Float64())
			if rng.IntN(2) == 0 {
				x, sc = sc, x
			}
			v := name()
			op(ta, v, fmt.Sprintf("%s(x=%s, y=%s)", pick(bins), x, sc))
			as = append(as, v)
		case k == 4: // the even and odd channels of a pair view: strided rows
			r, e, o := name(), name(), name()
			op(tp, r, fmt.Sprintf("reshape(x=%s, shape=pr)", pick(as)))
			op(tb, e, fmt.Sprintf("slice_by_size(x=%s, begin=z0, size=hz)", r))
			op(tb, o, fmt.Sprintf("slice_by_size(x=%s, begin=z1, size=hz)", r))
			bs = append(bs, e, o)
		case k == 5 && len(bs) > 1: // pairs rejoined
			j, f := name(), name()
			op(tp, j, fmt.Sprintf("concat(values=(%s, %s), axis=int32(2), interleave=bool(false))", pick(bs), pick(bs)))
			op(ta, f, fmt.Sprintf("reshape(x=%s, shape=fa)", j))
			as = append(as, f)
		case k == 6: // a channel half
			v := name()
			begin := "z0"
			if rng.IntN(2) == 0 {
				begin = "zh"
			}
			op(tb, v, fmt.Sprintf("slice_by_size(x=%s, begin=%s, size=hz)", pick(as), begin))
			bs = append(bs, v)
		}
	}
	// Outputs: the last value of each class, made dense by one more op.
	y := name()
	op(ta, y, fmt.Sprintf("mul(x=%s, y=%s(1.0))", as[len(as)-1], dt))
	outs := y
	if len(bs) > 0 {
		z := name()
		op(tb, z, fmt.Sprintf("add(x=%s, y=%s(0.0))", bs[len(bs)-1], dt))
		outs += ", " + z
	}
	fmt.Fprintf(&b, "    } -> (%s);\n}\n", outs)
	return b.String()
}

// Random programs of the steps chains are made of give the separate ops' bits in both numerics.
func TestRandomChainsGiveSeparateOpsBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	trials := 60
	if testing.Short() {
		trials = 15
	}
	chained := 0
	for trial := range trials {
		m := exactModes[trial%2]
		c, s := 2*(1+rng.IntN(8)), 1+rng.IntN(4000) // up to a dozen pieces of chainPiece
		src := randomChainProgram(rng, m.dt, c, s, 4+rng.IntN(14))
		fused, plain := compileSrcBoth(t, src, m.n)
		if steps, _ := chains(fused); steps > 0 {
			chained++
		}
		x := randInput(rng, c*s, 3)
		got, want := run(t, fused, x), run(t, plain, x)
		for i := range want {
			if bad, first := diffBits(got[i], want[i]); bad > 0 {
				t.Fatalf("trial %d (%s, C %d, S %d), output %d: %d elements differ, first %v\n%s", trial, m.dt, c, s, i, bad, first, src)
			}
		}
	}
	if chained < trials/3 {
		t.Errorf("only %d of %d programs formed a chain: the test would not see chains", chained, trials)
	}
}
