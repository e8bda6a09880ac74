package half

import (
	"math"
	"testing"
)

// TestFP16Known checks conversions against hand-worked encodings (those of the weight-file writer).
func TestFP16Known(t *testing.T) {
	tests := []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800},
		{65504, 0x7bff}, {65519, 0x7bff}, {65520, 0x7c00}, {1e6, 0x7c00}, {-1e6, 0xfc00},
		{float32(math.Inf(1)), 0x7c00}, {0.1, 0x2e66}, {1.0 / 3, 0x3555},
		{0x1p-24, 0x0001}, {0x1p-25, 0}, {0x1.8p-25, 0x0001}, {0x1p-14, 0x0400}, {0x1.ff8p-15, 0x03ff}, {0x1.ffcp-15, 0x0400}, {0x1.ff4p-15, 0x03fe},
		{1 + 0x1p-11, 0x3c00}, {1 + 0x3p-11, 0x3c02}, {1 + 0x1.2p-11, 0x3c01}, {0x3p-25, 0x0002},
	}
	for _, tc := range tests {
		if got := F32ToF16(tc.f); got != tc.h {
			t.Errorf("F32ToF16(%g) = %#04x, want %#04x", tc.f, got, tc.h)
		}
	}
	if h := F32ToF16(float32(math.NaN())); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("F32ToF16(NaN) = %#04x, not a NaN", h)
	}
	if f := F16ToF32(0x0001); f != 0x1p-24 {
		t.Errorf("F16ToF32(1) = %g", f)
	}
}

// TestBF16Known checks bfloat16 rounding on hand-worked encodings.
func TestBF16Known(t *testing.T) {
	tests := []struct {
		f float32
		h uint16
	}{{1, 0x3f80}, {-2, 0xc000}, {1 + 0x1p-8, 0x3f80}, {1 + 0x3p-8, 0x3f82}, {float32(math.Inf(-1)), 0xff80}}
	for _, tc := range tests {
		if got := F32ToBF16(tc.f); got != tc.h {
			t.Errorf("F32ToBF16(%g) = %#04x, want %#04x", tc.f, got, tc.h)
		}
	}
}
