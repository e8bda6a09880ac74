package mil

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/anestar/anestar/cpu"
)

// The conversions weight files need: float32 to and from fp16 and bf16 with round-half-to-even, and
// decoding of the integer dtypes. Bulk fp16 conversions use package cpu's vectorised code; the scalar
// functions here define the results.

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

// floatEncodingSize is the element size in bytes of the dtypes float data can be stored as (fp16, bf16,
// fp32), and 0 for any other dtype.
func floatEncodingSize(dt DType) int {
	switch dt {
	case FP16, BF16:
		return 2
	case FP32:
		return 4
	}
	return 0
}

// encodeChunk is the number of values encodeFloat32sTo converts at a time: the halves of one chunk are
// still in the L1 cache when the NaN pass reads them.
const encodeChunk = 4096

// encodeFloat32sTo encodes vals as little-endian elements of dtype dt (fp16, bf16 or fp32) into dst,
// which holds exactly floatEncodingSize(dt)*len(vals) bytes. fp16 goes through the vectorised bulk
// conversion of package cpu, which matches fp16Bits on every input except NaNs (it keeps payload bits);
// NaNs are then rewritten to fp16Bits's canonical quiet NaN, so the bytes are fp16Bits's.
func encodeFloat32sTo(dt DType, dst []byte, vals []float32) {
	le := binary.LittleEndian
	switch dt {
	case FP16:
		// Large weights are split over the cores: a compile happens between training steps, when the
		// other core is idle.
		parts := 1
		if len(vals) >= parallelEncodeMin {
			parts = min(runtime.GOMAXPROCS(0), 4)
		}
		var wg sync.WaitGroup
		for p := range parts {
			lo, hi := len(vals)*p/parts, len(vals)*(p+1)/parts
			wg.Go(func() { encodeF16Range(dst[2*lo:2*hi], vals[lo:hi]) })
		}
		wg.Wait()
	case BF16:
		for i, v := range vals {
			le.PutUint16(dst[2*i:], bf16Bits(v))
		}
	case FP32:
		for i, v := range vals {
			le.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	}
}

// parallelEncodeMin is the number of values from which an fp16 encode is split over goroutines.
const parallelEncodeMin = 1 << 18

// encodeF16Range encodes vals into dst (2 bytes each) chunk by chunk, with canonical NaNs.
func encodeF16Range(dst []byte, vals []float32) {
	for lo := 0; lo < len(vals); lo += encodeChunk {
		hi := min(lo+encodeChunk, len(vals))
		d := dst[2*lo : 2*hi]
		cpu.EncodeF16To(d, vals[lo:hi])
		canonicalNaNs(d)
	}
}

// canonicalNaNs rewrites every fp16 NaN in the little-endian halves of d to sign | 0x7e00. It tests
// sixteen halves at a time, four per uint64: with the sign bits cleared, a half is a NaN when it exceeds
// 0x7c00, that is when adding 0x03ff carries into bit 15 (no lane can carry into the next).
func canonicalNaNs(d []byte) {
	le := binary.LittleEndian
	const abs, bias, top = 0x7fff7fff7fff7fff, 0x03ff03ff03ff03ff, 0x8000800080008000
	i := 0
	for ; i+32 <= len(d); i += 32 {
		s := d[i : i+32 : i+32]
		a := le.Uint64(s[0:])&abs + bias
		b := le.Uint64(s[8:])&abs + bias
		c := le.Uint64(s[16:])&abs + bias
		e := le.Uint64(s[24:])&abs + bias
		if (a|b|c|e)&top != 0 {
			canonicalNaNsSlow(s)
		}
	}
	canonicalNaNsSlow(d[i:])
}

func canonicalNaNsSlow(d []byte) {
	le := binary.LittleEndian
	for i := 0; i+2 <= len(d); i += 2 {
		if h := le.Uint16(d[i:]); h&0x7fff > 0x7c00 {
			le.PutUint16(d[i:], h&0x8000|0x7e00)
		}
	}
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
	switch dt {
	case FP16:
		// The bulk conversion is exact, as fp16Float is, NaN payloads included.
		cpu.DecodeF16To(out, data)
		return out, nil
	case FP32:
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(data[4*i:]))
		}
		return out, nil
	}
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
