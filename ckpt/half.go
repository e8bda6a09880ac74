package ckpt

import "math"

// The conversions between float32 and the 16-bit and 8-bit float formats. They are local to this
// package so that it depends on nothing but the standard library; rounding is to nearest, ties to
// even, overflow gives ±Inf, and NaNs stay NaN (quiet) with their sign.

// f32ToF16 rounds f to the nearest IEEE half, ties to even.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(man>>13) // quiet NaN, top payload bits kept
	}
	e := exp - 127 + 15 // biased half exponent
	switch {
	case e >= 0x1f:
		return sign | 0x7c00
	case e <= 0:
		if e < -10 { // below 2^-25, half the smallest subnormal: rounds to zero
			return sign
		}
		// Subnormal half: the value is m * 2^-24 with m = (man|implicit) >> (14-e), rounded.
		man |= 0x800000
		shift := uint32(14 - e)
		r := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && r&1 == 1) {
			r++ // may carry into the smallest normal, which is right
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && r&1 == 1) {
		r++ // a carry into the exponent is right too, up to +Inf
	}
	return sign | uint16(r)
}

// f16ToF32 converts an IEEE half to float32 exactly.
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch exp {
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

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
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	exp := int(b>>3) & 0xf
	man := float64(b & 7)
	switch {
	case exp == 0xf && b&7 == 7:
		return math.NaN()
	case exp == 0:
		return sign * math.Ldexp(man/8, -6)
	}
	return sign * math.Ldexp(1+man/8, exp-7)
}

// f8e5m2ToF64 decodes an F8_E5M2 value (IEEE-like, with infinities and NaNs).
func f8e5m2ToF64(b uint8) float64 {
	sign := 1.0
	if b&0x80 != 0 {
		sign = -1
	}
	exp := int(b>>2) & 0x1f
	man := float64(b & 3)
	switch {
	case exp == 0x1f && man == 0:
		return math.Inf(int(sign))
	case exp == 0x1f:
		return math.NaN()
	case exp == 0:
		return sign * math.Ldexp(man/4, -14)
	}
	return sign * math.Ldexp(1+man/4, exp-15)
}
