package mil

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestBlobLayout compares one fp16 blob byte for byte with the layout of the reference sources.
func TestBlobLayout(t *testing.T) {
	w := NewBlobWriter()
	off, err := w.AddFloat32s(FP16, []float32{1, -2, 0.5})
	if err != nil || off != 64 {
		t.Fatalf("Add: offset %d, %v; want 64", off, err)
	}
	want := make([]byte, 192)
	want[0], want[4] = 1, 2                                        // count 1, version 2
	copy(want[64:], []byte{0xEF, 0xBE, 0xAD, 0xDE, 1, 0, 0, 0, 6}) // sentinel, fp16, size 6
	want[80] = 128                                                 // data offset
	copy(want[128:], []byte{0x00, 0x3C, 0x00, 0xC0, 0x00, 0x38})   // 1, -2, 0.5
	if got := w.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("file\n%x\nwant\n%x", got, want)
	}
}

func TestBlobRoundTrip(t *testing.T) {
	w := NewBlobWriter()
	type blob struct {
		dt   DType
		data []byte
		off  uint64
	}
	var blobs []*blob
	for i, dt := range []DType{FP16, FP32, Int8, UInt8, BF16, Int16, UInt16, Int32, UInt32} {
		size := dt.Bits() / 8
		data := make([]byte, size*(1+7*i)) // odd sizes so that padding matters
		for j := range data {
			data[j] = byte(j*31 + i)
		}
		off, err := w.Add(dt, data)
		if err != nil {
			t.Fatalf("Add %s: %v", dt, err)
		}
		if off%64 != 0 {
			t.Errorf("Add %s: offset %d not aligned", dt, off)
		}
		blobs = append(blobs, &blob{dt, data, off})
	}
	file := w.Bytes()
	if n, err := BlobFileCount(file); err != nil || n != len(blobs) || w.Count() != n {
		t.Errorf("count %d (%v), writer %d, want %d", n, err, w.Count(), len(blobs))
	}
	if len(file)%64 != 0 {
		t.Errorf("file length %d is not a multiple of 64", len(file))
	}
	for _, b := range blobs {
		dt, data, err := ReadBlob(file, b.off)
		if err != nil {
			t.Fatalf("ReadBlob(%d): %v", b.off, err)
		}
		if dt != b.dt || !bytes.Equal(data, b.data) {
			t.Errorf("blob at %d: got %s %x, want %s %x", b.off, dt, data, b.dt, b.data)
		}
		if doff := binary.LittleEndian.Uint64(file[b.off+16:]); doff != b.off+64 {
			t.Errorf("blob at %d: data at %d, want right after the metadata", b.off, doff)
		}
	}
}

func TestBlobFloat32s(t *testing.T) {
	vals := []float32{0, 1, -1.5, 65504, 1e-3, 3.14159}
	for _, dt := range []DType{FP16, FP32, BF16} {
		w := NewBlobWriter()
		off, err := w.AddFloat32s(dt, vals)
		if err != nil {
			t.Fatal(err)
		}
		v := &Value{Type: Tensor(dt, 2, 3), Blob: &BlobRef{Path: "@model_path/weights/w.bin", Offset: off}}
		got, err := v.Float32s(Weights{"@model_path/weights/w.bin": w.Bytes()})
		if err != nil {
			t.Fatalf("%s: %v", dt, err)
		}
		for i, x := range vals {
			tol := map[DType]float64{FP16: 1.0 / 1024, FP32: 0, BF16: 1.0 / 128}[dt]
			if math.Abs(float64(got[i]-x)) > tol*math.Abs(float64(x)) {
				t.Errorf("%s: element %d is %v, want %v", dt, i, got[i], x)
			}
		}
	}
	if _, err := NewBlobWriter().AddFloat32s(Int8, vals); err == nil {
		t.Error("AddFloat32s(int8) succeeded")
	}
	if _, err := NewBlobWriter().Add(FP16, []byte{1, 2, 3}); err == nil {
		t.Error("Add of 3 bytes of fp16 succeeded")
	}
	if _, err := NewBlobWriter().Add(Int64, make([]byte, 8)); err == nil {
		t.Error("Add of int64 succeeded")
	}
}

func TestReadBlobCorrupt(t *testing.T) {
	w := NewBlobWriter()
	w.AddFloat32s(FP16, make([]float32, 40)) // 80 bytes: metadata at 64, data at 128..208, file 256
	w.AddFloat32s(FP32, []float32{1, 2})     // metadata at 256
	good := w.Bytes()
	le := binary.LittleEndian
	tests := []struct {
		name   string
		edit   func(f []byte) []byte
		offset uint64
		err    string
	}{
		{"bad sentinel", func(f []byte) []byte { f[64] = 0; return f }, 64, "sentinel"},
		{"bad version", func(f []byte) []byte { f[4] = 3; return f }, 64, "version 3"},
		{"no blobs", func(f []byte) []byte { f[0] = 0; return f }, 64, "no blobs"},
		{"unknown dtype", func(f []byte) []byte { f[68] = 9; return f }, 64, "unknown dtype code 9"},
		{"truncated header", func(f []byte) []byte { return f[:40] }, 64, "shorter than its 64-byte header"},
		{"truncated data", func(f []byte) []byte { return f[:150] }, 64, "run past the end"},
		{"truncated metadata", func(f []byte) []byte { return f[:280] }, 256, "metadata runs past the end"},
		{"size beyond file", func(f []byte) []byte { le.PutUint64(f[72:], 1<<62); return f }, 64, "run past the end"},
		{"size overflow", func(f []byte) []byte { le.PutUint64(f[72:], math.MaxUint64); return f }, 64, "run past the end"},
		{"odd size", func(f []byte) []byte { le.PutUint64(f[72:], 79); return f }, 64, "whole number"},
		{"data offset unaligned", func(f []byte) []byte { le.PutUint64(f[80:], 130); return f }, 64, "not 64-byte aligned"},
		{"data offset before metadata", func(f []byte) []byte { le.PutUint64(f[80:], 64); return f }, 64, "not 64-byte aligned"},
		{"offset unaligned", func(f []byte) []byte { return f }, 65, "not a 64-byte aligned offset"},
		{"offset in header", func(f []byte) []byte { return f }, 0, "not a 64-byte aligned offset"},
		{"offset beyond file", func(f []byte) []byte { return f }, 1 << 40, "metadata runs past the end"},
		{"offset at data", func(f []byte) []byte { return f }, 128, "sentinel"},
	}
	for _, tc := range tests {
		f := tc.edit(bytes.Clone(good))
		_, _, err := ReadBlob(f, tc.offset)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
	if _, _, err := ReadBlob(good, 256); err != nil {
		t.Errorf("second blob: %v", err)
	}
}
