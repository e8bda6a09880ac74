package mil_test

import (
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/mil"
)

// randomChain is a forward program drawn from seed: a chain of 3 to 8 ops of random kinds over random
// [1, C, 1, S] shapes, each op taking the chain's last value and, sometimes, an earlier one, so that
// values are used more than once and cotangents add up.
func randomChain(seed uint64) gradCase {
	r := rand.New(rand.NewPCG(seed, 99))
	c, s := 1+r.IntN(4), 2+r.IntN(6)
	shape := []int{1, c, 1, s}
	return gradCase{
		name: "chain", inputs: map[string][]int{"x": shape, "u": shape},
		lo: -1, hi: 1,
		build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			vals := []*mil.Var{in["x"], in["u"]}
			cur := in["x"]
			n := 3 + r.IntN(6)
			for range n {
				other := vals[r.IntN(len(vals))]
				var next *mil.Var
				switch r.IntN(13) {
				case 0:
					next = b.Add("", cur, other)
				case 1:
					next = b.Sub("", other, cur)
				case 2:
					next = b.Mul("", cur, other)
				case 3:
					next = b.RealDiv("", cur, b.Add("", b.Mul("", other, other), 1.0))
				case 4:
					next = b.Sigmoid("", cur)
				case 5:
					next = b.Tanh("", cur)
				case 6:
					next = b.Softmax("", cur, []int{1, -1}[r.IntN(2)])
				case 7:
					next = b.Mul("", b.ReduceSum("", cur, []int{[]int{1, 3}[r.IntN(2)]}, true), other)
				case 8:
					t := b.Transpose("", cur, []int{0, 3, 2, 1})
					next = b.Transpose("", b.Mul("", t, t), []int{0, 3, 2, 1})
				case 9:
					sl := b.SliceBySize("", cur, []int{0, 0, 0, 1}, []int{1, c, 1, s - 1})
					next = b.Concat("", 3, false, sl, b.SliceBySize("", other, []int{0, 0, 0, 0}, []int{1, c, 1, 1}))
				case 10:
					m := b.Reshape("", cur, []int{1, 1, c, s})
					o := b.Reshape("", other, []int{1, 1, c, s})
					p := b.Matmul("", m, o, false, true) // [c, c]
					next = b.Reshape("", b.Matmul("", p, m, false, false), shape)
				case 11:
					next = b.Pow("", b.Add("", b.Mul("", cur, cur), 0.5), []float64{0.5, -0.5, 2, 3}[r.IntN(4)])
				default:
					next = b.Mul("", cur, 0.5)
				}
				vals = append(vals, next)
				cur = next
			}
			// Both inputs reach the output.
			return b.Add("out", cur, b.Mul("", in["u"], 0.25))
		},
	}
}

// TestGradRandomChains checks random chains of ops against central differences.
func TestGradRandomChains(t *testing.T) {
	for seed := range uint64(40) {
		c := randomChain(seed)
		checkGrad(t, c, seed)
		if t.Failed() {
			t.Fatalf("seed %d failed", seed)
		}
	}
}

// FuzzGrad is TestGradRandomChains over fuzzed seeds.
func FuzzGrad(f *testing.F) {
	for _, s := range []uint64{1, 17, 123} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		checkGrad(t, randomChain(seed), seed)
	})
}
