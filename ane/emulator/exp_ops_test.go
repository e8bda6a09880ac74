package emulator

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/fastexp"
)

// The exp, sigmoid and silu ops give the bits of the scalar formulas (FP32 mode, nothing rounded).
func TestUnaryExpOpsMatchScalar(t *testing.T) {
	const n = 4096
	src := `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 1, 1, 4096]> x) {
        tensor<fp32, [1, 1, 1, 4096]> e = exp(x=x)[name=string("e")];
        tensor<fp32, [1, 1, 1, 4096]> s = sigmoid(x=x)[name=string("s")];
        tensor<fp32, [1, 1, 1, 4096]> u = silu(x=x)[name=string("u")];
    } -> (e, s, u);
}
`
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.Float64()*220 - 110)
	}
	x[0], x[1], x[2] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))
	outs := run(t, compileText(t, Options{Numerics: FP32}, src), x)
	for i, v := range x {
		for j, want := range []float32{fastexp.Exp32(v), sigmoid32(v), v * sigmoid32(v)} {
			got := outs[j][i]
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("op %d of x=%v: got %v, want %v", j, v, got, want)
			}
		}
	}
}

// relu keeps positive values and NaN and gives +0 for the rest, -0 included (the bits of
// v > 0 || v != v ? v : 0).
func TestReluEdges(t *testing.T) {
	src := `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 1, 1, 40]> x) {
        tensor<fp32, [1, 1, 1, 40]> r = relu(x=x)[name=string("r")];
    } -> (r);
}
`
	x := make([]float32, 40)
	for i := range x {
		x[i] = float32(i-20) / 3
	}
	x[0], x[1], x[2], x[3], x[4] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 1e-40
	r := run(t, compileText(t, Options{Numerics: FP32}, src), x)[0]
	for i, v := range x {
		want := float32(0)
		if v > 0 || v != v {
			want = v
		}
		if math.Float32bits(r[i]) != math.Float32bits(want) && !(r[i] != r[i] && want != want) {
			t.Errorf("relu(%v) = %v (bits %#x), want %v", v, r[i], math.Float32bits(r[i]), want)
		}
	}
}
