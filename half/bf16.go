package half

import (
	"encoding/binary"
	"math"
)

// F32ToBF16 converts x to the nearest bfloat16 (the top half of a float32), rounding ties to even;
// overflow gives ±inf and a NaN stays a quiet NaN with its sign, even when its payload lies only in
// the low half.
func F32ToBF16(x float32) uint16 {
	b := math.Float32bits(x)
	if b&0x7fffffff > f32Inf {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// BF16ToF32 converts the bfloat16 bit pattern h to float32 exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// EncodeBF16To writes the first min(len(dst)/2, len(src)) values of src as little-endian bfloat16
// values into dst.
func EncodeBF16To(dst []byte, src []float32) {
	src = src[:min(len(dst)/2, len(src))]
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], F32ToBF16(v))
	}
}

// DecodeBF16To reads the first min(len(dst), len(src)/2) little-endian bfloat16 values of src into
// dst.
func DecodeBF16To(dst []float32, src []byte) {
	dst = dst[:min(len(dst), len(src)/2)]
	for i := range dst {
		dst[i] = BF16ToF32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}
