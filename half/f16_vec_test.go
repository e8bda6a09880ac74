package half

import (
	"math"
	"testing"

	"github.com/anestar/anestar/internal/simdtest"
)

// vecCases are float32 bit patterns that cover every regime of the half conversion: a strided sweep of
// all 2^32 patterns plus the neighbourhoods of each boundary (the smallest subnormal half and its tie,
// the smallest normal half, the largest finite half and the overflow tie at 65520, infinities, NaNs).
func vecCases() []float32 {
	var out []float32
	for b := uint64(0); b < 1<<32; b += 4099 {
		out = append(out, math.Float32frombits(uint32(b)))
	}
	for _, c := range []uint32{0, f32HalfTiny, 0x33800000, f32HalfNormal, 0x477fe000, f32HalfOver, f32Inf, 0x7fc00000, 0x7f800001, 0x7fa00000} {
		for d := uint32(0); d < 4200; d++ {
			for _, sign := range []uint32{0, 0x80000000} {
				out = append(out, math.Float32frombits(sign|(c+d-2100)))
			}
		}
	}
	// Ties at bit 13 in the normal range.
	for e := uint32(0x38800000); e < 0x47800000; e += 0x00800000 {
		out = append(out, math.Float32frombits(e|0x1000), math.Float32frombits(e|0x3000), math.Float32frombits(e|0x7fffff))
	}
	for len(out)%16 != 7 { // leave a scalar tail
		out = append(out, 1.5)
	}
	return out
}

// The vector conversions (F16C on amd64, AVX-512 where it runs) agree bit for bit with the scalar
// definitions F32ToF16, F16ToF32 and RoundF16, NaN payloads included.
func TestF16VectorMatchesScalar(t *testing.T) { simdtest.EachWidth(t, &use512, vectorMatchesScalar) }

func vectorMatchesScalar(t *testing.T) {
	src := vecCases()
	got := make([]float32, len(src))
	RoundF16To(got, src)
	enc := make([]byte, 2*len(src))
	EncodeF16To(enc, src)
	dec := make([]float32, len(src))
	DecodeF16To(dec, enc)
	bad := 0
	for i, v := range src {
		h := F32ToF16(v)
		want := F16ToF32(h)
		if math.Float32bits(got[i]) != math.Float32bits(want) {
			t.Errorf("RoundF16To(%#08x) = %#08x, want %#08x", math.Float32bits(v), math.Float32bits(got[i]), math.Float32bits(want))
			bad++
		}
		if e := uint16(enc[2*i]) | uint16(enc[2*i+1])<<8; e != h {
			t.Errorf("EncodeF16To(%#08x) = %#04x, want %#04x", math.Float32bits(v), e, h)
			bad++
		}
		if math.Float32bits(dec[i]) != math.Float32bits(want) {
			t.Errorf("DecodeF16To(%#04x) = %#08x, want %#08x", h, math.Float32bits(dec[i]), math.Float32bits(want))
			bad++
		}
		if bad > 10 {
			t.Fatal("too many mismatches")
		}
	}
	// In place, as the emulator uses it.
	cp := append([]float32(nil), src...)
	RoundF16To(cp, cp)
	for i := range cp {
		if math.Float32bits(cp[i]) != math.Float32bits(got[i]) {
			t.Fatalf("in-place RoundF16To differs at %d", i)
		}
	}
}

// Every half bit pattern decodes exactly and encodes back to itself (NaNs to their quiet form).
func TestF16VectorAllHalves(t *testing.T) { simdtest.EachWidth(t, &use512, vectorAllHalves) }

func vectorAllHalves(t *testing.T) {
	src := make([]byte, 2<<16)
	for h := range 1 << 16 {
		src[2*h], src[2*h+1] = byte(h), byte(h>>8)
	}
	dec := make([]float32, 1<<16)
	DecodeF16To(dec, src)
	enc := make([]byte, 2<<16)
	EncodeF16To(enc, dec)
	for h := range 1 << 16 {
		if math.Float32bits(dec[h]) != math.Float32bits(F16ToF32(uint16(h))) {
			t.Fatalf("decode %#04x = %v, want %v", h, dec[h], F16ToF32(uint16(h)))
		}
		if e := uint16(enc[2*h]) | uint16(enc[2*h+1])<<8; e != F32ToF16(dec[h]) {
			t.Fatalf("encode of %#04x = %#04x, want %#04x", h, e, F32ToF16(dec[h]))
		}
	}
}

func TestF16ToShortBuffers(t *testing.T) {
	src := []float32{1, 2, 3}
	dst := make([]float32, 2)
	RoundF16To(dst, src)
	if dst[0] != 1 || dst[1] != 2 {
		t.Errorf("RoundF16To into a short dst = %v", dst)
	}
	enc := make([]byte, 5)
	EncodeF16To(enc, src) // two values fit
	if enc[4] != 0 {
		t.Errorf("EncodeF16To wrote past two values")
	}
	dec := make([]float32, 3)
	DecodeF16To(dec, enc[:4])
	if dec[0] != 1 || dec[1] != 2 || dec[2] != 0 {
		t.Errorf("DecodeF16To = %v", dec)
	}
}

func BenchmarkRoundF16To(b *testing.B) {
	x := benchValues()
	b.SetBytes(4 * benchN)
	for b.Loop() {
		RoundF16To(x, x)
	}
}

// TestRoundF16Lengths checks RoundF16To against the scalar rounding at lengths around the vector
// blocks (16 values for F16C, 32 for AVX-512), so that every mix of block and tail runs.
func TestRoundF16Lengths(t *testing.T) { simdtest.EachWidth(t, &use512, roundF16Lengths) }

// roundF16Lengths is TestRoundF16Lengths for the conversions in use, the encode and decode included:
// every length up to 100 mixes the vector blocks (32 and 16 values) and the scalar tail.
func roundF16Lengths(t *testing.T) {
	src := vecCases()
	for n := range 100 {
		if n > len(src) {
			break
		}
		got := make([]float32, n)
		RoundF16To(got, src[:n])
		enc := make([]byte, 2*n)
		EncodeF16To(enc, src[:n])
		dec := make([]float32, n)
		DecodeF16To(dec, enc)
		for i, v := range src[:n] {
			h := F32ToF16(v)
			want := F16ToF32(h)
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("length %d: RoundF16To(%#08x)[%d] = %#08x, want %#08x", n, math.Float32bits(v), i, math.Float32bits(got[i]), math.Float32bits(want))
			}
			if e := uint16(enc[2*i]) | uint16(enc[2*i+1])<<8; e != h {
				t.Fatalf("length %d: EncodeF16To(%#08x)[%d] = %#04x, want %#04x", n, math.Float32bits(v), i, e, h)
			}
			if math.Float32bits(dec[i]) != math.Float32bits(want) {
				t.Fatalf("length %d: DecodeF16To(%#04x)[%d] = %#08x, want %#08x", n, h, i, math.Float32bits(dec[i]), math.Float32bits(want))
			}
		}
	}
}
