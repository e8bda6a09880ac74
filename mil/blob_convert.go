package mil

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The conversions weight files need: float32 to and from fp16 and bf16 with round-half-to-even, and
// decoding of the integer dtypes. Kept here so that mil depends on no numeric package.

// fp16Bits returns the IEEE 754 binary16 encoding of f, rounded to nearest, ties to even; values beyond
// the fp16 range become ±inf and NaN stays NaN.
func fp16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff:
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp == 0:
		return sign // fp32 subnormals are far below the smallest fp16 subnormal
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e >= 1 {
		// A carry out of the mantissa moves into the exponent, and from 30 into infinity.
		return sign | uint16(uint32(e)<<10+roundShift(mant, 13))
	}
	shift := uint(126 - exp) // fp16 subnormal: value = m * 2^-24
	if shift >= 25 {
		return sign
	}
	return sign | uint16(roundShift(mant|0x800000, shift))
}

// roundShift is v >> s rounded to nearest, ties to even (s >= 1).
func roundShift(v uint32, s uint) uint32 {
	q := v >> s
	rem := v & (1<<s - 1)
	half := uint32(1) << (s - 1)
	if rem > half || (rem == half && q&1 == 1) {
		q++
	}
	return q
}

// fp16Float returns the float32 value of the binary16 encoding h.
func fp16Float(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// bf16Bits returns the bfloat16 encoding of f, rounded to nearest, ties to even.
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// encodeFloat32s encodes vals as little-endian elements of dtype dt (fp16, bf16 or fp32).
func encodeFloat32s(dt DType, vals []float32) ([]byte, error) {
	switch dt {
	case FP16, BF16:
		out := make([]byte, 2*len(vals))
		for i, v := range vals {
			var h uint16
			if dt == FP16 {
				h = fp16Bits(v)
			} else {
				h = bf16Bits(v)
			}
			binary.LittleEndian.PutUint16(out[2*i:], h)
		}
		return out, nil
	case FP32:
		out := make([]byte, 4*len(vals))
		for i, v := range vals {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot store float data as %s (want fp16, bf16 or fp32)", dt)
}

// decodeFloat32s decodes little-endian elements of dtype dt into float32.
func decodeFloat32s(dt DType, data []byte) ([]float32, error) {
	size := dt.Bits() / 8
	if size == 0 || dt.Bits()%8 != 0 {
		return nil, fmt.Errorf("cannot decode %s data", dt)
	}
	if len(data)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s elements", len(data), dt)
	}
	n := len(data) / size
	out := make([]float32, n)
	le := binary.LittleEndian
	for i := range out {
		p := data[i*size:]
		switch dt {
		case FP16:
			out[i] = fp16Float(le.Uint16(p))
		case BF16:
			out[i] = math.Float32frombits(uint32(le.Uint16(p)) << 16)
		case FP32:
			out[i] = math.Float32frombits(le.Uint32(p))
		case Int8:
			out[i] = float32(int8(p[0]))
		case UInt8, Bool:
			out[i] = float32(p[0])
		case Int16:
			out[i] = float32(int16(le.Uint16(p)))
		case UInt16:
			out[i] = float32(le.Uint16(p))
		case Int32:
			out[i] = float32(int32(le.Uint32(p)))
		case UInt32:
			out[i] = float32(le.Uint32(p))
		default:
			return nil, fmt.Errorf("cannot decode %s data", dt)
		}
	}
	return out, nil
}
