package cpu

import (
	"math"
)

// rmsGrain is the number of elements of a [C, S] tensor below which RMSNorm
// stays on one goroutine.
const rmsGrain = 1 << 15

// RMSNorm normalises each column of the channel-first [C, S] tensor x
// (element (c, s) at x[c*S+s]) by its root mean square and scales channel c
// by w[c]:
//
//	out[c,s] = w[c] * x[c,s] / sqrt(mean_c(x[c,s]^2) + eps)
//
// as the reference's rmsnorm does. out may alias x.
func RMSNorm(out, x, w []float32, C, S int, eps float32) error {
	chk := lengthCheck{op: "cpu.RMSNorm"}
	chk.dims("C, S", C, S)
	chk.atLeast("out", out, C*S)
	chk.atLeast("x", x, C*S)
	chk.atLeast("w", w, C)
	if chk.err != nil {
		return chk.err
	}
	rrms := make([]float32, S)
	rmsInverse(rrms, x, C, S, eps)
	parallelFor(C, max(1, rmsGrain/S), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			xr, or, wc := x[c*S:(c+1)*S], out[c*S:(c+1)*S], w[c]
			for s, r := range rrms {
				or[s] = xr[s] * r * wc
			}
		}
	})
	return nil
}

// rmsInverse sets rrms[s] = 1/sqrt(mean_c(x[c,s]^2) + eps), summing over
// channels with columns split among goroutines.
func rmsInverse(rrms, x []float32, C, S int, eps float32) {
	parallelFor(S, max(1, rmsGrain/C), func(lo, hi int) {
		ss := rrms[lo:hi]
		clear(ss)
		for c := range C {
			xr := x[c*S+lo : c*S+hi]
			for s, v := range xr {
				ss[s] += v * v
			}
		}
		invC := 1 / float32(C)
		for s, v := range ss {
			ss[s] = float32(1 / math.Sqrt(float64(v*invC+eps)))
		}
	})
}

// RMSNormBackward computes the gradients of RMSNorm given dy, the gradient
// of the loss with respect to out. With r[s] = 1/sqrt(mean_c(x[c,s]^2)+eps):
//
//	dx[c,s] = r[s] * (w[c]*dy[c,s] - x[c,s] * r[s]^2/C * sum_c' dy[c',s]*x[c',s]*w[c'])
//	dw[c]  += sum_s dy[c,s] * x[c,s] * r[s]
//
// dw is accumulated (added to), as gradient accumulation over micro-batches
// needs; dx is overwritten and may alias dy. The reference's rmsnorm_bwd
// multiplies the second term of dx by w[c] as well, which agrees with this
// exact gradient only while w is all ones.
func RMSNormBackward(dx, dw, dy, x, w []float32, C, S int, eps float32) error {
	chk := lengthCheck{op: "cpu.RMSNormBackward"}
	chk.dims("C, S", C, S)
	chk.atLeast("dx", dx, C*S)
	chk.atLeast("dw", dw, C)
	chk.atLeast("dy", dy, C*S)
	chk.atLeast("x", x, C*S)
	chk.atLeast("w", w, C)
	if chk.err != nil {
		return chk.err
	}
	rrms := make([]float32, S)
	coef := make([]float32, S) // r^3/C * sum_c dy*x*w
	rmsInverse(rrms, x, C, S, eps)
	parallelFor(S, max(1, rmsGrain/C), func(lo, hi int) {
		dot := coef[lo:hi]
		for c := range C {
			xr, dr, wc := x[c*S+lo:c*S+hi], dy[c*S+lo:c*S+hi], w[c]
			for s, v := range xr {
				dot[s] += dr[s] * v * wc
			}
		}
		invC := 1 / float32(C)
		for s, r := range rrms[lo:hi] {
			dot[s] *= r * r * r * invC
		}
	})
	parallelFor(C, max(1, rmsGrain/S), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			xr, dr, gr, wc := x[c*S:(c+1)*S], dy[c*S:(c+1)*S], dx[c*S:(c+1)*S], w[c]
			var sw float32
			for s, r := range rrms {
				d, v := dr[s], xr[s]
				sw += d * v * r
				gr[s] = r*wc*d - v*coef[s]
			}
			dw[c] += sw
		}
	})
	return nil
}
