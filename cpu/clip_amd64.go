//go:build !noasm

package cpu

import "github.com/anestar/anestar/half"

// On amd64 with AVX2, GlobalNorm's sums of squares (and the softmax's sums of exponentials) run
// sixteen float64 lanes at a time and Scale eight float32 lanes. Scale's lanes are the scalar code's multiplications, so its bits are the same; the
// sums are kept in sixteen lanes that the Go code adds up, in both versions alike (sumSquares).

// sumSquaresAVX2 adds float64(x[i])^2 to lanes[i%16] for i < n, n a multiple of 16.
//
//go:noescape
func sumSquaresAVX2(x *float32, n int, lanes *[16]float64)

// sumAVX2 adds float64(x[i]) to lanes[i%16] for i < n, n a multiple of 16.
//
//go:noescape
func sumAVX2(x *float32, n int, lanes *[16]float64)

// scaleAVX2 sets x[i] *= s for i < n, n a multiple of 8.
//
//go:noescape
func scaleAVX2(x *float32, s float32, n int)

var hasClipVec = half.HasAVX2()

// sumSquaresVec runs sumSquaresAVX2 on the longest prefix of whole blocks of x and returns its length.
func sumSquaresVec(x []float32, lanes *[16]float64) int {
	n := len(x) &^ 15
	if !hasClipVec || n == 0 {
		return 0
	}
	sumSquaresAVX2(&x[0], n, lanes)
	return n
}

// sumVec runs sumAVX2 on the longest prefix of whole blocks of x and returns its length.
func sumVec(x []float32, lanes *[16]float64) int {
	n := len(x) &^ 15
	if !hasClipVec || n == 0 {
		return 0
	}
	sumAVX2(&x[0], n, lanes)
	return n
}

// scaleVec runs scaleAVX2 on the longest prefix of whole blocks of x and returns its length.
func scaleVec(x []float32, s float32) int {
	n := len(x) &^ 7
	if !hasClipVec || n == 0 {
		return 0
	}
	scaleAVX2(&x[0], s, n)
	return n
}
