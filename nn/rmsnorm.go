package nn

import (
	"math"

	"github.com/anestar/anestar/internal/par"
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
	if err := normArgs("nn.RMSNorm", C, S, "w", [][]float32{w}, "out, x", [][]float32{out, x}); err != nil {
		return err
	}
	rrms := make([]float32, S)
	rmsColumns(rrms, nil, x, nil, w, C, S, eps)
	par.Grained(C, max(1, rmsGrain/S), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			xr, or, wc := x[c*S:(c+1)*S], out[c*S:(c+1)*S], w[c]
			for s := rmsScaleVec(or, xr, rrms, wc); s < S; s++ {
				or[s] = xr[s] * rrms[s] * wc
			}
		}
	})
	return nil
}

// rmsColumns sets rrms[s] = 1/sqrt(mean_c(x[c,s]^2) + eps) and, with dy non-nil, coef[s] =
// r^3/C * sum_c dy[c,s]*x[c,s]*w[c], summing over channels in order, with strips of columns split
// among goroutines.
func rmsColumns(rrms, coef, x, dy, w []float32, C, S int, eps float32) {
	grain := (max(1, rmsGrain/C) + 7) &^ 7 // whole blocks of the vector code
	invC := 1 / float32(C)
	par.Grained(S, grain, func(lo, hi int) {
		ss := rrms[lo:hi]
		var dot, dys []float32
		if dy != nil {
			dot, dys = coef[lo:hi], dy[lo:]
		}
		for s := rmsColsVec(ss, dot, x[lo:], dys, w, C, S); s < len(ss); s++ {
			var sq, d float32
			for c := range C {
				v := x[c*S+lo+s]
				sq += v * v
				if dy != nil {
					d += dys[c*S+s] * v * w[c]
				}
			}
			ss[s] = sq
			if dy != nil {
				dot[s] = d
			}
		}
		for s, v := range ss {
			r := float32(1 / math.Sqrt(float64(v*invC+eps)))
			ss[s] = r
			if dy != nil {
				dot[s] *= r * r * r * invC
			}
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
	if err := normArgs("nn.RMSNormBackward", C, S, "dw, w", [][]float32{dw, w}, "dx, dy, x", [][]float32{dx, dy, x}); err != nil {
		return err
	}
	rrms := make([]float32, S)
	coef := make([]float32, S) // r^3/C * sum_c dy*x*w
	rmsColumns(rrms, coef, x, dy, w, C, S, eps)
	par.Grained(C, max(1, rmsGrain/S), func(lo, hi int) {
		for c := lo; c < hi; c++ {
			xr, dr, gr, wc := x[c*S:(c+1)*S], dy[c*S:(c+1)*S], dx[c*S:(c+1)*S], w[c]
			// sum_s dy*x*r in eight lanes, s%8, then added up in order: the vector code's sum.
			var lanes [8]float32
			n := S &^ 7
			if rmsGradVec(gr, dr, xr, rrms, coef, wc, &lanes) == 0 {
				for s := range n {
					d, v, r := dr[s], xr[s], rrms[s]
					lanes[s%8] += d * v * r
					gr[s] = r*wc*d - v*coef[s]
				}
			}
			sw := lanes[0]
			for _, l := range lanes[1:] {
				sw += l
			}
			for s := n; s < S; s++ {
				d, v, r := dr[s], xr[s], rrms[s]
				sw += d * v * r
				gr[s] = r*wc*d - v*coef[s]
			}
			dw[c] += sw
		}
	})
	return nil
}
