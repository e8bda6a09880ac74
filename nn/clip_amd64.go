//go:build !noasm

package nn

import "github.com/anestar/anestar/internal/cpuid"

// On amd64 with AVX2, the float64 sums of GlobalNorm (of squares) and of the softmax's exponentials run
// sixteen lanes at a time, which the Go code adds up, in both versions alike (laneSum).

// laneSumAVX2 adds float64(x[i]), squared with square, to lanes[i%16] for i < n, n a multiple of 16.
//
//go:noescape
func laneSumAVX2(x *float32, n int, lanes *[16]float64, square bool)

var hasClipVec = cpuid.HasAVX2()

// laneSumVec runs laneSumAVX2 on the longest prefix of whole blocks of x and returns its length.
func laneSumVec(x []float32, lanes *[16]float64, square bool) int {
	n := len(x) &^ 15
	if !hasClipVec || n == 0 {
		return 0
	}
	laneSumAVX2(&x[0], n, lanes, square)
	return n
}
