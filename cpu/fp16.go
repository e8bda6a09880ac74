package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Bit patterns of IEEE 754 binary16 (half precision) values.
const (
	f16SignMask = 0x8000
	f16Inf      = 0x7c00 // +inf; |h| > f16Inf is NaN
	f16QuietNaN = 0x7e00 // canonical quiet NaN
	// MaxF16 is the largest finite half-precision value.
	MaxF16 = 65504.0
)

// Bit patterns of float32 magnitudes where F32ToF16 changes regime.
const (
	f32Inf        = 0x7f800000 // +inf; larger magnitudes are NaN
	f32HalfOver   = 0x477ff000 // 65520: halfway between MaxF16 and 2^16, rounds (to even) to inf
	f32HalfNormal = 0x38800000 // 2^-14: the smallest normal half
	f32HalfTiny   = 0x33000000 // 2^-25: half the smallest subnormal half; ties to even give zero
	f32Rebias     = 0x38000000 // (127-15)<<23: moves a float32 exponent to the half bias
)

// F32ToF16 converts x to the nearest IEEE half-precision value, rounding
// ties to even. Magnitudes of 65520 and above become ±inf (no saturation),
// tiny values become half subnormals or signed zero, infinities stay
// infinities, and NaNs stay NaNs (quiet, keeping the high payload bits).
func F32ToF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & f16SignMask
	a := b &^ 0x80000000
	switch {
	case a >= f32HalfNormal && a < f32HalfOver:
		return sign | f16Normal(a)
	case a >= f32Inf:
		if a > f32Inf {
			return sign | f16QuietNaN | uint16(a>>13)&0x3ff
		}
		return sign | f16Inf
	case a >= f32HalfOver:
		return sign | f16Inf
	case a <= f32HalfTiny:
		return sign
	default:
		return sign | f16Subnormal(a)
	}
}

// f16Normal encodes a float32 magnitude a in [2^-14, 65520) whose half
// value is normal (or rounds up into the next binade, which the carry
// into the exponent field handles).
func f16Normal(a uint32) uint16 {
	r := a - f32Rebias
	r += 0xfff + (r>>13)&1 // round half to even at bit 13
	return uint16(r >> 13)
}

// f16Subnormal encodes a float32 magnitude a in (2^-25, 2^-14) as a half
// subnormal m*2^-24; m == 1024 is the smallest normal, which the encoding
// gives for free.
func f16Subnormal(a uint32) uint16 {
	e := a >> 23
	mant := a&0x7fffff | 0x800000
	s := 126 - e // a = mant * 2^(e-150), m = mant * 2^(e-126)
	m := (mant + (1 << (s - 1)) - 1 + (mant>>s)&1) >> s
	return uint16(m)
}

// F16ToF32 converts the half-precision bit pattern h to float32. The
// conversion is exact: every half value is a float32 value.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&f16SignMask) << 16
	e := uint32(h>>10) & 0x1f
	m := uint32(h & 0x3ff)
	switch {
	case e == 0x1f: // inf or NaN
		return math.Float32frombits(sign | f32Inf | m<<13)
	case e != 0:
		return math.Float32frombits(sign | (e+112)<<23 | m<<13)
	case m == 0:
		return math.Float32frombits(sign)
	default: // subnormal: m * 2^-24, exact in float32
		v := float32(m) * (1.0 / (1 << 24))
		return math.Float32frombits(sign | math.Float32bits(v))
	}
}

// f16Table maps every half bit pattern to its float32 value.
var f16Table = buildF16Table()

func buildF16Table() *[1 << 16]float32 {
	t := new([1 << 16]float32)
	for i := range t {
		t[i] = F16ToF32(uint16(i))
	}
	return t
}

// RoundF16 returns the half-precision value nearest to x, as a float32.
// It is what storing x in an fp16 tensor and reading it back gives.
func RoundF16(x float32) float32 {
	return f16Table[F32ToF16(x)]
}

// RoundF16Slice rounds every element of x to the nearest half-precision
// value in place.
func RoundF16Slice(x []float32) {
	if len(x) < 2*f16Grain {
		roundF16Range(x)
		return
	}
	parallelFor(len(x), f16Grain, func(lo, hi int) {
		roundF16Range(x[lo:hi])
	})
}

// RoundF16To stores in dst[i] the half-precision value nearest to src[i]
// (as RoundF16 does) for the first min(len(dst), len(src)) elements, on the
// calling goroutine and without allocating; dst may be src. On amd64 it
// uses the F16C instructions.
func RoundF16To(dst, src []float32) {
	n := min(len(dst), len(src))
	dst, src = dst[:n], src[:n]
	i := roundF16Vec(dst, src)
	roundF16Scalar(dst[i:], src[i:])
}

func roundF16Range(x []float32) { RoundF16To(x, x) }

// roundF16Scalar is RoundF16To without vector instructions; len(dst) == len(src).
func roundF16Scalar(dst, src []float32) {
	x := dst
	for i, v := range src {
		b := math.Float32bits(v)
		a := b &^ 0x80000000
		if a-f32HalfNormal < f32HalfOver-f32HalfNormal {
			// Normal half: round the float32 bits at the half's last
			// mantissa bit (bit 13), ties to even; no rebias needed.
			r := a + 0xfff + (a>>13)&1
			x[i] = math.Float32frombits(b&0x80000000 | r&^0x1fff)
		} else {
			x[i] = f16Table[F32ToF16(v)]
		}
	}
}

// f16Fast is F32ToF16 with the common normal case inline; the rare cases
// go through the general function.
func f16Fast(x float32) uint16 {
	b := math.Float32bits(x)
	a := b &^ 0x80000000
	if a-f32HalfNormal < f32HalfOver-f32HalfNormal { // unsigned: a in [HalfNormal, HalfOver)
		r := a - f32Rebias
		r += 0xfff + (r>>13)&1
		return uint16(b>>16)&f16SignMask | uint16(r>>13)
	}
	return F32ToF16(x)
}

// f16Grain is the number of elements below which bulk conversions stay on
// one goroutine.
const f16Grain = 1 << 15

// EncodeF16 writes src as little-endian half-precision values into the
// first 2*len(src) bytes of dst, rounding ties to even. It returns an error
// when dst is too short.
func EncodeF16(dst []byte, src []float32) error {
	if len(dst) < 2*len(src) {
		return fmt.Errorf("cpu.EncodeF16: dst has %d bytes, need %d for %d values", len(dst), 2*len(src), len(src))
	}
	if len(src) < 2*f16Grain {
		encodeF16Range(dst, src)
		return nil
	}
	parallelFor(len(src), f16Grain, func(lo, hi int) {
		encodeF16Range(dst[2*lo:2*hi], src[lo:hi])
	})
	return nil
}

// EncodeF16To is EncodeF16 on the calling goroutine, without allocating,
// for the first min(len(dst)/2, len(src)) values.
func EncodeF16To(dst []byte, src []float32) {
	encodeF16Range(dst, src[:min(len(dst)/2, len(src))])
}

func encodeF16Range(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	i := encodeF16Vec(dst, src)
	dst, src = dst[2*i:], src[i:]
	for i, v := range src {
		// f16Fast by hand: the compiler does not inline it here.
		b := math.Float32bits(v)
		a := b &^ 0x80000000
		var h uint16
		if a-f32HalfNormal < f32HalfOver-f32HalfNormal {
			r := a - f32Rebias
			r += 0xfff + (r>>13)&1
			h = uint16(b>>16)&f16SignMask | uint16(r>>13)
		} else {
			h = F32ToF16(v)
		}
		dst[2*i] = byte(h)
		dst[2*i+1] = byte(h >> 8)
	}
}

// DecodeF16 reads len(src)/2 little-endian half-precision values from src
// into the start of dst. It returns an error when src has an odd length or
// dst is too short.
func DecodeF16(dst []float32, src []byte) error {
	if len(src)%2 != 0 {
		return fmt.Errorf("cpu.DecodeF16: src has odd length %d", len(src))
	}
	n := len(src) / 2
	if len(dst) < n {
		return fmt.Errorf("cpu.DecodeF16: dst has %d values, need %d", len(dst), n)
	}
	if n < 2*f16Grain {
		decodeF16Range(dst[:n], src)
		return nil
	}
	parallelFor(n, f16Grain, func(lo, hi int) {
		decodeF16Range(dst[lo:hi], src[2*lo:2*hi])
	})
	return nil
}

// DecodeF16To is DecodeF16 on the calling goroutine, without allocating,
// for the first min(len(dst), len(src)/2) values.
func DecodeF16To(dst []float32, src []byte) {
	decodeF16Range(dst[:min(len(dst), len(src)/2)], src)
}

func decodeF16Range(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	i := decodeF16Vec(dst, src)
	decodeF16Scalar(dst[i:], src[2*i:])
}

// decodeF16Scalar is decodeF16Range without vector instructions.
func decodeF16Scalar(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	t := f16Table
	for i := range dst {
		dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
	}
}
