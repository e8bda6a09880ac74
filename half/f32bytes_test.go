package half

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestF32Bytes checks the float32 byte conversions against encoding/binary, at offsets that are not
// multiples of 4 into the byte buffer, with special values.
func TestF32Bytes(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -2.5, math.MaxFloat32, math.SmallestNonzeroFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 3.14159}
	for off := range 4 {
		buf := make([]byte, off+4*len(vals))
		EncodeF32To(buf[off:], vals)
		for i, v := range vals {
			if got := binary.LittleEndian.Uint32(buf[off+4*i:]); got != math.Float32bits(v) {
				t.Fatalf("offset %d: element %d encoded %#x, want %#x", off, i, got, math.Float32bits(v))
			}
		}
		back := make([]float32, len(vals))
		DecodeF32To(back, buf[off:])
		for i, v := range vals {
			if math.Float32bits(back[i]) != math.Float32bits(v) {
				t.Fatalf("offset %d: element %d decoded %g, want %g", off, i, back[i], v)
			}
		}
	}
	EncodeF32To(nil, nil)
	DecodeF32To(nil, nil)
}

// TestDecodeF32RoundF16 checks the rounding load against decoding then RoundF16To, at aligned and
// unaligned offsets (both paths), over random values and the special ones.
func TestDecodeF32RoundF16(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -2.5, 65519, 65520, 1e-8, 3.14159,
		float32(math.Inf(1)), float32(math.NaN())}
	for i := range 100 {
		vals = append(vals, float32(math.Sin(float64(i)*1.7)*float64(i*i)))
	}
	want := make([]float32, len(vals))
	RoundF16To(want, vals)
	for off := range 4 {
		buf := make([]byte, off+4*len(vals))
		EncodeF32To(buf[off:], vals)
		got := make([]float32, len(vals))
		DecodeF32RoundF16To(got, buf[off:])
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("offset %d: element %d (%g) loaded as %g, want %g", off, i, vals[i], got[i], want[i])
			}
		}
	}
	DecodeF32RoundF16To(nil, nil)
}
