package nn

import "github.com/anestar/anestar/internal/par"

// LayerNorm normalises each column of the channel-first [C, S] tensor x to
// mean 0 and variance 1 and scales channel c by w[c], without a bias (the
// LayerNorm of nanoGPT's bias=False GPT-2):
//
//	out[c,s] = w[c] * (x[c,s] - m[s]) / sqrt(mean_c((x[c,s] - m[s])^2) + eps),  m[s] = mean_c x[c,s]
//
// It is RMSNorm of the centred columns. out may alias x.
func LayerNorm(out, x, w []float32, C, S int, eps float32) error {
	if err := normArgs("nn.LayerNorm", C, S, "w", [][]float32{w}, "out, x", [][]float32{out, x}); err != nil {
		return err
	}
	xc := make([]float32, C*S)
	centreColumns(xc, x, C, S)
	return RMSNorm(out, xc, w, C, S, eps)
}

// LayerNormBackward computes the gradients of LayerNorm given dy, the
// gradient of the loss with respect to out: with xc the centred columns and
// g the gradient of RMSNorm(xc) (RMSNormBackward), dx = g minus its column
// means (centring is a projection, its own transpose), and dw accumulates as
// RMSNormBackward's does. dx is overwritten and may alias dy.
func LayerNormBackward(dx, dw, dy, x, w []float32, C, S int, eps float32) error {
	if err := normArgs("nn.LayerNormBackward", C, S, "dw, w", [][]float32{dw, w}, "dx, dy, x", [][]float32{dx, dy, x}); err != nil {
		return err
	}
	xc := make([]float32, C*S)
	centreColumns(xc, x, C, S)
	if err := RMSNormBackward(dx, dw, dy, xc, w, C, S, eps); err != nil {
		return err
	}
	centreColumns(dx, dx, C, S)
	return nil
}

// centreColumns sets out = x minus the mean of each column, summing over
// channels in order; out may alias x.
func centreColumns(out, x []float32, C, S int) {
	mean := make([]float32, S)
	for c := range C {
		for s, v := range x[c*S : (c+1)*S] {
			mean[s] += v
		}
	}
	inv := 1 / float32(C)
	for s := range mean {
		mean[s] *= inv
	}
	par.Grained(C, max(1, rmsGrain/S), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			xr, or := x[c*S:(c+1)*S], out[c*S:(c+1)*S]
			for s, v := range xr {
				or[s] = v - mean[s]
			}
		}
	})
}
