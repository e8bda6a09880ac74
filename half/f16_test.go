package half

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// halfValue64 computes the value of half bit pattern h from the definition
// of IEEE binary16, in float64.
func halfValue64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	case 0:
		return sign * m * math.Ldexp(1, -24)
	default:
		return sign * (1 + m/1024) * math.Ldexp(1, e-15)
	}
}

// roundHalf64 rounds x to the nearest binary16 value (ties to even) with
// float64 arithmetic: the spacing of halves near x is 2^(e-10) where 2^e is
// the binade of x (at least 2^-14, the subnormal spacing regime).
func roundHalf64(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	_, exp := math.Frexp(math.Abs(x)) // |x| = f * 2^exp, f in [0.5, 1)
	e := max(exp-1, -14)
	ulp := math.Ldexp(1, e-10)
	r := math.RoundToEven(x/ulp) * ulp
	if math.Abs(r) > MaxF16 {
		return math.Copysign(math.Inf(1), x)
	}
	if r == 0 {
		return math.Copysign(0, x)
	}
	return r
}

// sameFloat reports whether a and b are the same value, telling the zeros
// apart and treating all NaNs as equal.
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b && math.Signbit(a) == math.Signbit(b)
}

func TestF16ToF32Exhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		want := halfValue64(h)
		got := F16ToF32(h)
		if !sameFloat(float64(got), want) {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, got, want)
		}
		if tb := f16Table[h]; math.Float32bits(tb) != math.Float32bits(got) {
			t.Fatalf("table[%#04x] = %g, F16ToF32 = %g", h, tb, got)
		}
	}
}

func TestF16RoundTripExhaustive(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		back := F32ToF16(F16ToF32(h))
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		switch {
		case !isNaN:
			if back != h {
				t.Fatalf("F32ToF16(F16ToF32(%#04x)) = %#04x", h, back)
			}
		case h&0x200 != 0: // quiet NaN: payload kept
			if back != h {
				t.Fatalf("quiet NaN %#04x came back as %#04x", h, back)
			}
		default: // signalling NaN: quieted, sign kept
			if back != h|0x200 {
				t.Fatalf("signalling NaN %#04x came back as %#04x, want %#04x", h, back, h|0x200)
			}
		}
	}
}

// TestF32ToF16Ties checks every midpoint between adjacent halves (exact in
// float32), and the float32 neighbours on either side of it.
func TestF32ToF16Ties(t *testing.T) {
	for i := range 0x7c00 { // positive finite halves; i+1 may be +inf
		lo, hi := float64(F16ToF32(uint16(i))), halfValue64(uint16(i+1))
		if math.IsInf(hi, 1) {
			hi = 65536 // the value inf stands for when rounding
		}
		mid := float32((lo + hi) / 2)
		if float64(mid) != (lo+hi)/2 {
			t.Fatalf("midpoint of %#04x not exact in float32", i)
		}
		even := uint16(i)
		if i&1 == 1 {
			even = uint16(i + 1)
		}
		for _, sign := range []float32{1, -1} {
			sb := uint16(0)
			if sign < 0 {
				sb = 0x8000
			}
			if got := F32ToF16(sign * mid); got != sb|even {
				t.Fatalf("F32ToF16(%g) = %#04x, want %#04x", sign*mid, got, sb|even)
			}
			below := math.Nextafter32(mid, 0)
			if got := F32ToF16(sign * below); got != sb|uint16(i) {
				t.Fatalf("F32ToF16(%g) = %#04x, want %#04x", sign*below, got, sb|uint16(i))
			}
			above := math.Nextafter32(mid, float32(math.Inf(1)))
			if got := F32ToF16(sign * above); got != sb|uint16(i+1) {
				t.Fatalf("F32ToF16(%g) = %#04x, want %#04x", sign*above, got, sb|uint16(i+1))
			}
		}
	}
}

func checkEncode(t *testing.T, x float32) {
	t.Helper()
	want := roundHalf64(float64(x))
	got := F16ToF32(F32ToF16(x))
	if !sameFloat(float64(got), want) {
		t.Fatalf("round(%g [%#08x]) = %g [%#04x], want %g", x, math.Float32bits(x), got, F32ToF16(x), want)
	}
	if r := RoundF16(x); !sameFloat(float64(r), want) {
		t.Fatalf("RoundF16(%g) = %g, want %g", x, r, want)
	}
}

func TestF32ToF16Edges(t *testing.T) {
	inf := float32(math.Inf(1))
	edges := []float32{
		0, float32(math.Copysign(0, -1)), 1, -1, 0.5, 2, 3, 1.0 / 3, 0.1, -0.1,
		MaxF16, -MaxF16, 65519.99, 65520, -65520, 65536, 1e6, -1e30, inf, -inf,
		float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000),
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		6.103515625e-05,            // 2^-14 smallest normal
		6.097555160522461e-05,      // largest subnormal
		5.960464477539063e-08,      // 2^-24 smallest subnormal
		2.9802322387695312e-08,     // 2^-25 ties to zero
		2.9802326e-08, 8.940697e-8, // just above 2^-25, 1.5*2^-24 (tie to even 2)
		-2.9802322387695312e-08, 1e-10, -1e-10,
		math.Nextafter32(6.103515625e-05, 0), 1e-5, 1e-4, 1024.5, 2049, 2051, 4097,
	}
	for _, x := range edges {
		checkEncode(t, x)
	}
	if F32ToF16(65520) != 0x7c00 || F32ToF16(-65520) != 0xfc00 || F32ToF16(65519.99) != 0x7bff {
		t.Fatal("overflow threshold wrong")
	}
	if F32ToF16(8.940697e-8) != 2 || F32ToF16(2.9802322387695312e-08) != 0 {
		t.Fatal("subnormal ties wrong")
	}
}

func TestF32ToF16Random(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 400000 {
		checkEncode(t, math.Float32frombits(rng.Uint32())) // every exponent
	}
	for range 400000 { // the range halves cover, densely
		e := rng.IntN(44) - 28
		x := float32(math.Ldexp(rng.Float64()+1, e))
		if rng.IntN(2) == 0 {
			x = -x
		}
		checkEncode(t, x)
	}
}

func TestBulkF16(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 7, 3*f16Grain + 5} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(rng.NormFloat64() * math.Ldexp(1, rng.IntN(40)-25))
		}
		if n > 3 {
			src[0], src[1], src[2] = float32(math.Inf(-1)), 7e4, float32(math.NaN())
		}
		buf := make([]byte, 2*n+3)
		for i := range buf {
			buf[i] = 0xaa
		}
		if err := EncodeF16(buf, src); err != nil {
			t.Fatal(err)
		}
		for i, x := range src {
			if h := binary.LittleEndian.Uint16(buf[2*i:]); h != F32ToF16(x) {
				t.Fatalf("n=%d: EncodeF16[%d] = %#04x, want %#04x", n, i, h, F32ToF16(x))
			}
		}
		if buf[2*n] != 0xaa {
			t.Fatalf("n=%d: EncodeF16 wrote past its values", n)
		}
		dst := make([]float32, n+1)
		dst[n] = 42
		if err := DecodeF16(dst, buf[:2*n]); err != nil {
			t.Fatal(err)
		}
		if dst[n] != 42 {
			t.Fatalf("n=%d: DecodeF16 wrote past its values", n)
		}
		rounded := append([]float32(nil), src...)
		RoundF16To(rounded, rounded)
		for i, x := range src {
			want := RoundF16(x)
			if !sameFloat(float64(dst[i]), float64(want)) || !sameFloat(float64(rounded[i]), float64(want)) {
				t.Fatalf("n=%d [%d]: decode %g, RoundF16To %g, want %g", n, i, dst[i], rounded[i], want)
			}
		}
	}
}

func TestBulkF16Errors(t *testing.T) {
	if err := EncodeF16(make([]byte, 5), make([]float32, 3)); err == nil {
		t.Error("EncodeF16 with short dst: no error")
	}
	if err := DecodeF16(make([]float32, 3), make([]byte, 5)); err == nil {
		t.Error("DecodeF16 with odd src: no error")
	}
	if err := DecodeF16(make([]float32, 2), make([]byte, 6)); err == nil {
		t.Error("DecodeF16 with short dst: no error")
	}
}

func FuzzF32ToF16(f *testing.F) {
	for _, b := range []uint32{0, 0x3f800000, 0x477ff000, 0x33000001, 0x7fc00001, 0x387fc000} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, bits uint32) {
		checkEncode(t, math.Float32frombits(bits))
	})
}
