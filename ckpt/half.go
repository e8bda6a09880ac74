package ckpt

import (
	"math"

	"github.com/anestar/anestar/cpu"
)

// The conversions between float32 and the 16-bit and 8-bit float formats of safetensors. IEEE
// half is package cpu's (the project's one fp16 conversion); bfloat16 and the fp8 formats live
// here. Rounding is to nearest, ties to even, overflow gives ±Inf, and NaNs stay NaN (quiet)
// with their sign.

// f32ToF16 rounds f to the nearest IEEE half, ties to even.
func f32ToF16(f float32) uint16 { return cpu.F32ToF16(f) }

// f16ToF32 converts an IEEE half to float32 exactly.
func f16ToF32(h uint16) float32 { return cpu.F16ToF32(h) }

// f32ToBF16 rounds f to the nearest bfloat16, ties to even.
func f32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40 // NaN: keep it NaN even when the payload sits in the low half
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// bf16ToF32 converts a bfloat16 to float32 exactly.
func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

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
