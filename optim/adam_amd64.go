//go:build !noasm

package optim

import "github.com/anestar/anestar/internal/cpuid"

// On amd64 with AVX2, Adam's update runs eight parameters at a time with the scalar code's operations
// in its order, each an IEEE float32 operation (no fused multiply-add; VSQRTPS is the correctly
// rounded root that sqrt32 also gives), so the bits are the scalar code's.

// adamConsts are the update's constants, in the order adamAVX2 reads them.
type adamConsts struct {
	b1, c1, b2, c2, decay, bc1, bc2, lr, eps, gs float32
}

// adamAVX2 updates w, m and v from grad for n elements, n a multiple of 8.
//
//go:noescape
func adamAVX2(w, grad, m, v *float32, n int, c *adamConsts)

var hasAdamVec = cpuid.HasAVX2()

// adamVec runs the vector code on the longest prefix of whole blocks of w and returns its length.
func adamVec(w, g, m, v []float32, c adamConsts) int {
	n := len(w) &^ 7
	if !hasAdamVec || n == 0 {
		return 0
	}
	_, _, _ = g[n-1], m[n-1], v[n-1]
	adamAVX2(&w[0], &g[0], &m[0], &v[0], n, &c)
	return n
}
