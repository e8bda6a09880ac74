//go:build !noasm

package nn

import "github.com/anestar/anestar/internal/cpuid"

// On amd64 with AVX2, RMSNorm's passes run eight columns at a time. Each lane is the scalar code's
// sequence of IEEE float32 operations (no fused multiply-add), so the bits are the same; the one sum
// along a row, of the gain's gradient, is kept in eight lanes that the Go code adds up, in both
// versions alike (rmsRowGrad).

// rmsColsAVX2 sets ss[s] = sum over c < C, in order, of x[c*S+s]^2 for s < n, n a multiple of 8, and
// with dy non-nil also dot[s] = sum of (dy[c*S+s]*x[c*S+s])*w[c].
//
//go:noescape
func rmsColsAVX2(ss, dot, x, dy, w *float32, C, S, n int)

// rmsScaleAVX2 sets out[s] = (x[s]*r[s])*wc for s < n, n a multiple of 8.
//
//go:noescape
func rmsScaleAVX2(out, x, r *float32, wc float32, n int)

// rmsGradAVX2 sets dx[s] = (r[s]*wc)*dy[s] - x[s]*coef[s] and adds (dy[s]*x[s])*r[s] to lanes[s%8],
// for s < n, n a multiple of 8; dx may be dy.
//
//go:noescape
func rmsGradAVX2(dx, dy, x, r, coef *float32, wc float32, lanes *[8]float32, n int)

var hasRMSVec = cpuid.HasAVX2()

// rmsColsVec runs rmsColsAVX2 on the longest prefix of whole blocks of ss and returns its length.
func rmsColsVec(ss, dot, x, dy, w []float32, C, S int) int {
	n := len(ss) &^ 7
	if !hasRMSVec || n == 0 {
		return 0
	}
	_, _ = x[(C-1)*S+n-1], w[C-1]
	var dp, dyp *float32
	if dy != nil {
		_, _ = dot[n-1], dy[(C-1)*S+n-1]
		dp, dyp = &dot[0], &dy[0]
	}
	rmsColsAVX2(&ss[0], dp, &x[0], dyp, &w[0], C, S, n)
	return n
}

// rmsScaleVec runs rmsScaleAVX2 on the longest prefix of whole blocks of out and returns its length.
func rmsScaleVec(out, x, r []float32, wc float32) int {
	n := len(out) &^ 7
	if !hasRMSVec || n == 0 {
		return 0
	}
	_, _ = x[n-1], r[n-1]
	rmsScaleAVX2(&out[0], &x[0], &r[0], wc, n)
	return n
}

// rmsGradVec runs rmsGradAVX2 on the longest prefix of whole blocks of dx and returns its length.
func rmsGradVec(dx, dy, x, r, coef []float32, wc float32, lanes *[8]float32) int {
	n := len(dx) &^ 7
	if !hasRMSVec || n == 0 {
		return 0
	}
	_, _, _, _ = dy[n-1], x[n-1], r[n-1], coef[n-1]
	rmsGradAVX2(&dx[0], &dy[0], &x[0], &r[0], &coef[0], wc, lanes, n)
	return n
}
