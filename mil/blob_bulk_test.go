package mil

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/half"
)

// encodedHalves writes vals to a weight file as fp16 and returns the halves of the blob.
func encodedHalves(t testing.TB, vals []float32) []uint16 {
	t.Helper()
	w := NewBlobWriter()
	off, err := w.AddFloat32s(FP16, vals)
	if err != nil {
		t.Fatal(err)
	}
	dt, data, err := ReadBlob(w.Bytes(), off)
	if err != nil || dt != FP16 || len(data) != 2*len(vals) {
		t.Fatalf("ReadBlob: %s, %d bytes, %v", dt, len(data), err)
	}
	hs := make([]uint16, len(vals))
	for i := range hs {
		hs[i] = binary.LittleEndian.Uint16(data[2*i:])
	}
	return hs
}

// TestBulkFP16Encoding checks that the bulk fp16 encoding of weight files gives exactly half.F32ToF16's bytes:
// for every sign, exponent and top ten mantissa bits of float32 (so every rounding boundary of normal
// and subnormal halves and the overflow edge), with low bits below, at and above the tie, and for NaNs
// with every kind of payload at every position of a block.
func TestBulkFP16Encoding(t *testing.T) {
	lows := []uint32{0, 1, 0xfff, 0x1000, 0x1001, 0x1fff}
	vals := make([]float32, 0, len(lows)<<19+100)
	for hi := uint32(0); hi < 1<<19; hi++ {
		for _, lo := range lows {
			vals = append(vals, math.Float32frombits(hi<<13|lo))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(vals); i += 1 + r.IntN(5000) {
		vals[i] = math.Float32frombits(r.Uint32() | 0x7f800001) // NaN, any sign and payload
	}
	vals = append(vals, 1, 2, 3) // a tail shorter than a vector block
	got := encodedHalves(t, vals)
	for i, v := range vals {
		if want := half.F32ToF16(v); got[i] != want {
			t.Fatalf("element %d: %g (%#08x) encodes as %#04x, half.F32ToF16 gives %#04x", i, v, math.Float32bits(v), got[i], want)
		}
	}
}

// TestBulkDecoding checks the bulk decoders against the element-wise definitions: every fp16 bit
// pattern (NaN payloads included) bit for bit against half.F16ToF32, and random fp32 and bf16 patterns.
func TestBulkDecoding(t *testing.T) {
	data := make([]byte, 2<<16)
	for h := range 1 << 16 {
		binary.LittleEndian.PutUint16(data[2*h:], uint16(h))
	}
	got, err := decodeFloat32s(FP16, data)
	if err != nil {
		t.Fatal(err)
	}
	for h, f := range got {
		if want := half.F16ToF32(uint16(h)); math.Float32bits(f) != math.Float32bits(want) {
			t.Fatalf("half %#04x decodes as %#08x, half.F16ToF32 gives %#08x", h, math.Float32bits(f), math.Float32bits(want))
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	raw := make([]byte, 4*1001)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	f32, err := decodeFloat32s(FP32, raw)
	if err != nil {
		t.Fatal(err)
	}
	bf, err := decodeFloat32s(BF16, raw)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	for i, f := range f32 {
		if want := le.Uint32(raw[4*i:]); math.Float32bits(f) != want {
			t.Fatalf("fp32 element %d: %#08x, want %#08x", i, math.Float32bits(f), want)
		}
	}
	for i, f := range bf {
		if want := uint32(le.Uint16(raw[2*i:])) << 16; math.Float32bits(f) != want {
			t.Fatalf("bf16 element %d: %#08x, want %#08x", i, math.Float32bits(f), want)
		}
	}
	// fp32 and bf16 weights written with AddFloat32s read back: bit for bit, and half.F32ToBF16's rounding.
	w := NewBlobWriter()
	o32, _ := w.AddFloat32s(FP32, f32)
	o16, _ := w.AddFloat32s(BF16, f32)
	_, d32, _ := ReadBlob(w.Bytes(), o32)
	_, d16, _ := ReadBlob(w.Bytes(), o16)
	if !bytes.Equal(d32, raw) {
		t.Error("fp32 blob differs from the bits written")
	}
	for i, f := range f32 {
		if h, want := le.Uint16(d16[2*i:]), half.F32ToBF16(f); h != want {
			t.Fatalf("bf16 element %d: %#04x, want %#04x", i, h, want)
		}
	}
}

// TestBlobWriterTake checks that a file handed out by take does not change when the writer goes on.
func TestBlobWriterTake(t *testing.T) {
	w := NewBlobWriter()
	off1, _ := w.AddFloat32s(FP16, []float32{1, 2, 3})
	file := w.take()
	kept := bytes.Clone(file)
	off2, err := w.AddFloat32s(FP32, []float32{4, 5})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, kept) {
		t.Fatalf("taken file changed:\n%x\nwas\n%x", file, kept)
	}
	if n, _ := BlobFileCount(w.Bytes()); n != 2 {
		t.Fatalf("file holds %d blobs, want 2", n)
	}
	for _, off := range []uint64{off1, off2} {
		if _, _, err := ReadBlob(w.Bytes(), off); err != nil {
			t.Errorf("blob at %d: %v", off, err)
		}
	}
	if uint64(len(kept)) != off2 || !bytes.Equal(w.Bytes()[4:off2], kept[4:]) {
		t.Error("the writer's file does not start with the taken one (after the count)")
	}
	if _, _, err := ReadBlob(kept, off2); err == nil {
		t.Error("the taken file holds the second blob")
	}
}

// TestBuildWeightsStay checks that weight files returned by Build keep their bytes when the builder
// adds a weight to the same file afterwards.
func TestBuildWeightsStay(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 1, 2, 1, 1))
	path := "@model_path/weights/all.bin"
	a := b.WeightIn(path, "a", FP16, []int{1, 2, 1, 1}, []float32{1, 2})
	b.Output(b.Op1("add", "y", Args{"x": x, "y": a}))
	_, w1, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	kept := bytes.Clone(w1[path])
	b.WeightIn(path, "c", FP16, []int{1, 2, 1, 1}, []float32{3, 4})
	_, w2, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w1[path], kept) {
		t.Error("the first Build's weight file changed")
	}
	if n, _ := BlobFileCount(w2[path]); n != 2 {
		t.Errorf("second Build's file holds %d blobs, want 2", n)
	}
}

// FuzzBulkFP16 compares the bulk fp16 encoding with half.F32ToF16 on arbitrary float32 bit patterns.
func FuzzBulkFP16(f *testing.F) {
	f.Add([]byte{0, 0, 0xc0, 0x7f, 1, 0, 0x80, 0xff, 0, 0xf0, 0x7f, 0x47})
	f.Add(bytes.Repeat([]byte{0x01, 0x00, 0x80, 0x7f}, 33))
	f.Add(bytes.Repeat([]byte{0x00, 0x10, 0x00, 0x33}, 17))
	f.Fuzz(func(t *testing.T, raw []byte) {
		vals := make([]float32, len(raw)/4)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		got := encodedHalves(t, vals)
		for i, v := range vals {
			if want := half.F32ToF16(v); got[i] != want {
				t.Fatalf("element %d: %#08x encodes as %#04x, want %#04x", i, math.Float32bits(v), got[i], want)
			}
		}
	})
}
