package half

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// TestF16HandValues checks hand-worked encodings of the checkpoint writer (ties, subnormals, low-payload NaNs).
func TestF16HandValues(t *testing.T) {
	for _, tc := range []struct {
		in   float32
		want uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {0.1, 0x2e66}, {65504, 0x7bff}, {65519.99, 0x7bff},
		{65520, 0x7c00}, // the tie between 65504 and 2^16 rounds to the even one: +Inf
		{float32(math.Inf(-1)), 0xfc00}, {float32(math.Copysign(0, -1)), 0x8000},
		{0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-25, 0x0000}, {0x3p-26, 0x0001}, // 0.75 × smallest subnormal
		{0x1.8p-24, 0x0002}, // 1.5 × smallest subnormal: tie, rounds to even (2)
		{0x1.4p-24, 0x0001}, {0x1.000002p-25, 0x0001},
		{1 + 0x1p-11, 0x3c00}, {1 + 0x3p-11, 0x3c02}, {1 + 0x1p-11 + 0x1p-20, 0x3c01},
	} {
		if got := F32ToF16(tc.in); got != tc.want {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if h := F32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN became %#04x", h)
	}
	// A NaN whose payload lies only in the low bits must stay NaN.
	if h := F32ToF16(math.Float32frombits(0xff800001)); h != 0xfe00 {
		t.Errorf("low-payload NaN became %#04x", h)
	}
}

// nearest rounds x to the nearest of the sorted finite values vals (all of one sign
// convention), ties to the one whose bits are even, values past the largest by more than half
// an ulp to infinity. It is the slow, obviously right definition the fast code must match.
func nearest(x float64, vals []float64, bits []uint16, maxUlp float64, inf uint16) uint16 {
	if x >= vals[len(vals)-1]+maxUlp/2 {
		return inf
	}
	i := sort.SearchFloat64s(vals, x)
	if i < len(vals) && vals[i] == x {
		return bits[i]
	}
	if i == len(vals) {
		return bits[len(vals)-1]
	}
	lo, hi := i-1, i
	dl, dh := x-vals[lo], vals[hi]-x
	switch {
	case dl < dh:
		return bits[lo]
	case dh < dl:
		return bits[hi]
	case bits[lo]&1 == 0:
		return bits[lo]
	}
	return bits[hi]
}

// checkRounding compares conv on many float32 values against nearest over the non-negative
// finite values of a 16-bit format given by decode.
func checkRounding(t *testing.T, name string, conv func(float32) uint16, decode func(uint16) float32, maxBits uint16, r *rand.Rand) {
	var vals []float64
	var bits []uint16
	for h := uint16(0); h <= maxBits; h++ {
		vals = append(vals, float64(decode(h)))
		bits = append(bits, h)
	}
	maxUlp := vals[len(vals)-1] - vals[len(vals)-2]
	inf := maxBits + 1
	var inputs []float32
	for i := 0; i+1 < len(vals); i++ { // every midpoint and its neighbours
		mid := float32((vals[i] + vals[i+1]) / 2)
		inputs = append(inputs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e38))
	}
	for i := 0; i < 200000; i++ {
		inputs = append(inputs, math.Float32frombits(r.Uint32()&0x7f7fffff)) // finite, non-negative
	}
	for _, x := range inputs {
		want := nearest(float64(x), vals, bits, maxUlp, inf)
		if got := conv(x); got != want {
			t.Fatalf("%s(%g = %#08x) = %#04x, want %#04x", name, x, math.Float32bits(x), got, want)
		}
		if got := conv(-x); got != want|0x8000 {
			t.Fatalf("%s(%g) = %#04x, want %#04x", name, -x, got, want|0x8000)
		}
	}
}

func TestF16Rounding(t *testing.T) {
	checkRounding(t, "F32ToF16", F32ToF16, F16ToF32, 0x7bff, rand.New(rand.NewPCG(3, 4)))
}

func TestBF16Rounding(t *testing.T) {
	checkRounding(t, "F32ToBF16", F32ToBF16, BF16ToF32, 0x7f7f, rand.New(rand.NewPCG(5, 6)))
	for _, tc := range []struct {
		in   float32
		want uint16
	}{{1, 0x3f80}, {math.Pi, 0x4049}, {-0.5, 0xbf00}, {float32(math.Inf(1)), 0x7f80}, {math.MaxFloat32, 0x7f80}} {
		if got := F32ToBF16(tc.in); got != tc.want {
			t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	if h := F32ToBF16(math.Float32frombits(0x7f800001)); h&0x7f80 != 0x7f80 || h&0x7f == 0 {
		t.Errorf("low-payload NaN became %#04x", h)
	}
}
