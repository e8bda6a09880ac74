//go:build !noasm

package half

import "github.com/anestar/anestar/internal/cpuid"

// On amd64 the bulk half-precision conversions use the F16C instructions (VCVTPS2PH with round to
// nearest even, VCVTPH2PS) sixteen values at a time, thirty-two on ZMM registers where AVX-512 runs.
// They give exactly the results of F32ToF16 and F16ToF32 on every input, NaN payloads included: blocks
// of halves holding infinities or NaNs are decoded by the scalar code, since VCVTPH2PS would quiet
// signalling NaNs. The scalar code also handles the tails and CPUs without F16C.

//go:noescape
func roundF16F16C(dst, src *float32, n int)

//go:noescape
func encodeF16F16C(dst *byte, src *float32, n int)

//go:noescape
func decodeF16F16C(dst *float32, src *byte, n int) (done int)

//go:noescape
func roundF16AVX512(dst, src *float32, n int)

//go:noescape
func encodeF16AVX512(dst *byte, src *float32, n int)

//go:noescape
func decodeF16AVX512(dst *float32, src *byte, n int) (done int)

// use512: the conversions run thirty-two values a loop on ZMM registers where AVX-512F runs (twice
// the F16C code's rate on values in cache), the last block of sixteen on the F16C code; the tests turn
// it off to check that code too.
var use512 = cpuid.HasF16C() && cpuid.HasAVX2() && cpuid.HasAVX512() // the decode checks its blocks with AVX2

// roundF16Vec rounds the longest prefix of src that the vector code handles into dst and returns its
// length; len(dst) >= len(src).
func roundF16Vec(dst, src []float32) int {
	n := len(src) &^ 15
	if !cpuid.HasF16C() || n == 0 {
		return 0
	}
	m := 0
	if use512 {
		if m = n &^ 31; m > 0 {
			roundF16AVX512(&dst[0], &src[0], m)
		}
	}
	if m < n {
		roundF16F16C(&dst[m], &src[m], n-m)
	}
	return n
}

// encodeF16Vec encodes the longest prefix of src that the vector code handles; len(dst) >= 2*len(src).
func encodeF16Vec(dst []byte, src []float32) int {
	n := len(src) &^ 15
	if !cpuid.HasF16C() || n == 0 {
		return 0
	}
	m := 0
	if use512 {
		if m = n &^ 31; m > 0 {
			encodeF16AVX512(&dst[0], &src[0], m)
		}
	}
	if m < n {
		encodeF16F16C(&dst[2*m], &src[m], n-m)
	}
	return n
}

// decodeF16Vec decodes the longest prefix of dst that the vector code handles; len(src) >= 2*len(dst).
func decodeF16Vec(dst []float32, src []byte) int {
	n := len(dst) &^ 15
	if !cpuid.HasF16C() || n == 0 {
		return 0
	}
	i := 0
	for i < n {
		if use512 && n-i >= 32 {
			if i += decodeF16AVX512(&dst[i], &src[2*i], (n-i)&^31); i == n {
				break
			}
		}
		i += decodeF16F16C(&dst[i], &src[2*i], n-i)
		if i < n { // a block with infinities or NaNs
			decodeF16Scalar(dst[i:i+16], src[2*i:2*i+32])
			i += 16
		}
	}
	return n
}
