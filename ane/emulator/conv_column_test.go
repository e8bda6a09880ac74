package emulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// A pointwise conv over one column with constant weights (a token's products in generation) runs
// x^T W^T on W transposed at compile time: each output is the fixed-order sum over the input
// channels, in order, of float32 products (FP32 numerics, nothing rounded).
func TestConvOneColumnFixedOrder(t *testing.T) {
	fixedOrderGemm(t) // without the vector code the product goes to the library: the reference's order then
	const cin, cout = 40, 72
	rng := rand.New(rand.NewPCG(41, 42))
	w := make([]float32, cout*cin)
	vals := make([]string, len(w))
	for i := range w {
		w[i] = float32(rng.NormFloat64())
		vals[i] = fmt.Sprint(w[i])
	}
	src := fmt.Sprintf(`program(1.3)
{
    func main<ios18>(tensor<fp32, [1, %[1]d, 1, 1]> x) {
        tensor<fp32, [%[2]d, %[1]d, 1, 1]> w = const()[name=string("w"), val=tensor<fp32, [%[2]d, %[1]d, 1, 1]>([%[3]s])];
        tensor<fp32, [1, %[2]d, 1, 1]> y = conv(x=x, weight=w)[name=string("y")];
    } -> (y);
}
`, cin, cout, strings.Join(vals, ", "))
	k := compileText(t, Options{Numerics: FP32}, src)
	defer k.Close()
	for trial := range 3 {
		x := randInput(rng, cin, 5)
		x[trial] = float32(math.Inf(1))
		y := run(t, k, x)[0]
		for co := range cout {
			var s float32
			for ci := range cin {
				s = s + float32(w[co*cin+ci]*x[ci])
			}
			if math.Float32bits(y[co]) != math.Float32bits(s) && !(y[co] != y[co] && s != s) {
				t.Fatalf("trial %d: y[%d] = %v, the fixed-order sum %v", trial, co, y[co], s)
			}
		}
	}
}
