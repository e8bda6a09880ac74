package ckpt

import "math"

// The decoders of the 8-bit float formats of safetensors; IEEE half and bfloat16 are package half's.

// f8e4m3ToF64 decodes an F8_E4M3 ("fn": no infinities, S.1111.111 is NaN) value.
func f8e4m3ToF64(b uint8) float64 {
	if b&0x7f == 0x7f {
		return math.NaN()
	}
	return f8Finite(b, 3, 7)
}

// f8e5m2ToF64 decodes an F8_E5M2 value (IEEE-like, with infinities and NaNs).
func f8e5m2ToF64(b uint8) float64 {
	switch {
	case b&0x7f == 0x7c:
		return math.Inf(1 - 2*int(b>>7))
	case b&0x7c == 0x7c:
		return math.NaN()
	}
	return f8Finite(b, 2, 15)
}

// f8Finite decodes the finite 8-bit float b: a sign bit, 7-manBits exponent bits with the given
// bias, and manBits mantissa bits; exponent 0 is subnormal.
func f8Finite(b uint8, manBits, bias int) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	exp := int(b&0x7f) >> manBits
	man := float64(int(b)&(1<<manBits-1)) / float64(int(1)<<manBits)
	if exp == 0 {
		return sign * math.Ldexp(man, 1-bias)
	}
	return sign * math.Ldexp(1+man, exp-bias)
}
