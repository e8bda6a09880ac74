package emulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/half"
)

// A pointwise conv over one column with constant weights (a token's products in generation) runs
// x^T W^T on W transposed at compile time: each output is the fixed-order sum over the input
// channels, in order, of float32 products: in FP32 numerics nothing rounded; in FP16 (fp16 weights and
// input, the fp16 path with fused multiply-adds where the CPU has them) that sum rounded once to fp16.
// 75 outputs: blocks of eight and a tail of three.
func TestConvOneColumnFixedOrder(t *testing.T) {
	fixedOrderGemm(t) // without the vector code the product goes to the library: the reference's order then
	for _, mode := range []struct {
		name  string
		n     Numerics
		dtype string
		round func(float32) float32
	}{
		{"FP32", FP32, "fp32", func(v float32) float32 { return v }},
		{"FP16", FP16, "fp16", half.RoundF16},
	} {
		t.Run(mode.name, func(t *testing.T) {
			const cin, cout = 40, 75
			rng := rand.New(rand.NewPCG(41, 42))
			w := make([]float32, cout*cin)
			vals := make([]string, len(w))
			for i := range w {
				w[i] = mode.round(float32(rng.NormFloat64()))
				vals[i] = fmt.Sprint(w[i])
			}
			src := fmt.Sprintf(`program(1.3)
{
    func main<ios18>(tensor<%[4]s, [1, %[1]d, 1, 1]> x) {
        tensor<%[4]s, [%[2]d, %[1]d, 1, 1]> w = const()[name=string("w"), val=tensor<%[4]s, [%[2]d, %[1]d, 1, 1]>([%[3]s])];
        tensor<%[4]s, [1, %[2]d, 1, 1]> y = conv(x=x, weight=w)[name=string("y")];
    } -> (y);
}
`, cin, cout, strings.Join(vals, ", "), mode.dtype)
			k := compileText(t, Options{Numerics: mode.n}, src)
			defer k.Close()
			for trial := range 4 {
				x := randInput(rng, cin, 5)
				for i := range x {
					x[i] = mode.round(x[i])
				}
				if trial == 3 { // every sum then +-inf or NaN
					x[trial] = float32(math.Inf(1))
				}
				y := run(t, k, x)[0]
				for co := range cout {
					var s float32
					for ci := range cin {
						s = s + float32(w[co*cin+ci]*x[ci])
					}
					s = mode.round(s)
					if math.Float32bits(y[co]) != math.Float32bits(s) && !(y[co] != y[co] && s != s) {
						t.Fatalf("trial %d: y[%d] = %v, the fixed-order sum %v", trial, co, y[co], s)
					}
				}
			}
		})
	}
}
