//go:build !noasm

package fastexp

import (
	"math"

	"github.com/anestar/anestar/internal/cpuid"
)

// On amd64 with AVX2, expShifted runs exp32's fast-range operations eight lanes at a time (sixteen
// where AVX-512 runs) in the same order, each one rounded to float32 (no fused multiply-add), so the
// bits are exp32's. Lanes outside the fast range that exp32 maps to a constant (+inf above expOver, 0
// below expUnder, NaN to itself) are blended in; a block holding an argument in (expUnder, expFastLo)
// or (expFastHi, expOver], whose result exp32 scales in two steps, is left to the scalar code.

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

// expShiftedAVX512 is expShiftedAVX2 sixteen lanes at a time (n a multiple of 16), with the table's
// constants in sixteen lanes and an int32 -1 after them.
//
//go:noescape
func expShiftedAVX512(dst, src *float32, n int, shift float32, sign uint32, tab *[expTabLen + 1][16]float32) (done int)

// expTab512 is expTab sixteen lanes wide, then -1 (for the floor's correction).
var expTab512 = func() (t [expTabLen + 1][16]float32) {
	for i := range expTabLen {
		for j := range t[i] {
			t[i][j] = expTab[i][0]
		}
	}
	for j := range t[expTabLen] {
		t[expTabLen][j] = math.Float32frombits(0xffffffff)
	}
	return t
}()

// hasExpVec reports whether the CPU and OS support AVX2.
var hasExpVec = cpuid.HasAVX2()

// use512 is whether blocks of sixteen run on the AVX-512 code (AVX-512F); its blocks take about half
// the time of two AVX2 blocks in cache. The tests turn it off to check the AVX2 code too.
var use512 = hasExpVec && cpuid.HasAVX512()

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
	done := 0
	if use512 && n >= 16 {
		if done = expShiftedAVX512(&dst[0], &src[0], n&^15, shift, sign, &expTab512); done == n {
			return n
		}
	}
	// The rest, or from a block of sixteen the AVX-512 code left: blocks of eight until one holds an
	// argument left to the scalar code (Shifted then calls again past it).
	return done + expShiftedAVX2(&dst[done], &src[done], n-done, shift, sign, &expTab)
}
