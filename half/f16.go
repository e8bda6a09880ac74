package half

import "math"

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

// RoundF16 returns the half-precision value nearest to x, as a float32:
// what storing x in an fp16 tensor and reading it back gives. The common
// normal range is rounded on the float32 bits directly; subnormals,
// overflow, infinities and NaNs go through F32ToF16.
func RoundF16(x float32) float32 {
	b := math.Float32bits(x)
	if (b&^0x80000000)-f32HalfNormal < f32HalfOver-f32HalfNormal { // 2^-14 <= |x| < 65520
		return math.Float32frombits((b + 0xfff + (b>>13)&1) &^ 0x1fff)
	}
	return f16Table[F32ToF16(x)]
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
