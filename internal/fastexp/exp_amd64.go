//go:build !noasm

package fastexp

import (
	"math"

	"github.com/anestar/anestar/internal/cpuid"
)

// On amd64 with AVX2, expShifted runs exp32's fast-range operations eight lanes at a time in the same
// order, each one rounded to float32 (no fused multiply-add), so the bits are exp32's. Lanes outside the
// fast range that exp32 maps to a constant (+inf above expOver, 0 below expUnder, NaN to itself) are
// blended in; a block holding an argument in (expUnder, expFastLo) or (expFastHi, expOver], whose result
// exp32 scales in two steps, is left to the scalar code.

// expVecWidth is the lanes of one vector block.
const expVecWidth = 8

// expShiftedAVX2 computes blocks of 8 from the start of src (n a multiple of 8) until a block holds an
// argument it leaves to the scalar code, and returns the count done. sign is XORed into each source
// value (0x80000000 negates) before shift is subtracted.
//
//go:noescape
func expShiftedAVX2(dst, src *float32, n int, shift float32, sign uint32, tab *[expTabLen][8]float32) (done int)

// The vector code's constants, each in all eight lanes, in the order expShiftedAVX2 reads them.
const expTabLen = 17

var expTab = func() (t [expTabLen][8]float32) {
	for i, v := range [expTabLen]float32{expLog2e, 0.5, expLn2hi, expLn2lo, expC6, expC5, expC4, expC3, expC2,
		expC1, 1, expFastLo, expFastHi, expUnder, expOver, float32(math.Inf(1)), math.Float32frombits(127)} {
		for j := range t[i] {
			t[i][j] = v
		}
	}
	return t
}()

// hasExpVec reports whether the CPU and OS support AVX2.
var hasExpVec = cpuid.HasAVX2()

// expShiftedVec runs the vector code on the longest prefix of whole blocks it handles and returns its
// length; len(src) >= len(dst).
func expShiftedVec(dst, src []float32, shift float32, neg bool) int {
	n := len(dst) &^ (expVecWidth - 1)
	if n == 0 {
		return 0
	}
	var sign uint32
	if neg {
		sign = 1 << 31
	}
	return expShiftedAVX2(&dst[0], &src[0], n, shift, sign, &expTab)
}
