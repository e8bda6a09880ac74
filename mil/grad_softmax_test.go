package mil_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// TestGradSoftmaxFP16Cancellation: in fp16 the softmax gradient p*(g - sum(p*g)) stays accurate in
// d = g - sum(p*g)'s own scale when g's row has a common part far larger than its spread (an attention
// backward's dP: every key's value shares a mean). Its weighted mean rounded once to fp16 carries an
// error of the common part's size times 2^-11 into the whole row; the rule's second centering pass
// takes it away, so that the row of the gradient sums to zero (softmax ignores a shift of its input).
// The reference is float64 on the same fp16 inputs.
func TestGradSoftmaxFP16Cancellation(t *testing.T) {
	const rows, n = 64, 128
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, 1, rows, n))
	b.Output(b.Softmax("y", x, -1))
	p, w, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	gr, err := mil.Grad(p, w, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(37, 1))
	probs, g := make([]float32, rows*n), make([]float32, rows*n)
	for i := range rows {
		logits := make([]float64, n)
		var z float64
		for j := range logits {
			logits[j] = 2 * r.NormFloat64()
			z += math.Exp(logits[j])
		}
		common := 20 + 60*r.Float64()
		if i%2 == 1 {
			common = -common
		}
		for j := range n {
			probs[i*n+j] = half.RoundF16(float32(math.Exp(logits[j]) / z))
			g[i*n+j] = half.RoundF16(float32(common + r.Float64()*2 - 1))
		}
	}
	be := emulator.New(emulator.Options{Numerics: emulator.FP16, Relaxed: true})
	dx := evalProgram(t, be, gr.Backward, gr.BackwardWeights, map[string][]float32{"x": make([]float32, rows*n), "y": probs, "d_y": g})["d_x"]
	worst := 0.0
	for i := range rows {
		pr, gi := probs[i*n:(i+1)*n], g[i*n:(i+1)*n]
		var mean, psum, pmax, dmax float64
		for j := range n {
			mean += float64(pr[j]) * float64(gi[j])
			psum += float64(pr[j])
		}
		mean /= psum // the mean under the fp16 probabilities, which sum to 1 only within their rounding
		for j := range n {
			pmax = max(pmax, float64(pr[j]))
			dmax = max(dmax, math.Abs(float64(gi[j])-mean))
		}
		for j := range n {
			want := float64(pr[j]) * (float64(gi[j]) - mean)
			worst = max(worst, math.Abs(float64(dx[i*n+j])-want)/(pmax*dmax))
		}
	}
	// A few fp16 roundings of d's own scale (4e-4 here); the common part (20-80 against a spread of 1)
	// rounded once gave 0.03.
	if worst > 2e-3 {
		t.Errorf("fp16 softmax gradient: worst error %.3g of the row's largest p times largest |d|, want under 2e-3", worst)
	}
	t.Logf("worst error %.3g", worst)
}
