package mil

import (
	"slices"
	"testing"
)

// FuzzReadBlob feeds ReadBlob arbitrary files and offsets: it must never panic, and what it accepts must
// lie within the file.
func FuzzReadBlob(f *testing.F) {
	w := NewBlobWriter()
	w.AddFloat32s(FP16, []float32{1, 2, 3})
	w.Add(Int8, []byte{1, 2, 3, 4, 5})
	f.Add(slices.Clone(w.Bytes()), uint64(64))
	f.Add(slices.Clone(w.Bytes()), uint64(192))
	f.Add(slices.Clone(w.Bytes()[:100]), uint64(64))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, file []byte, off uint64) {
		dt, data, err := ReadBlob(file, off)
		if err != nil {
			return
		}
		if _, ok := BlobCode(dt); !ok {
			t.Fatalf("accepted dtype %s", dt)
		}
		if len(data) > len(file) || len(data)%(dt.Bits()/8) != 0 {
			t.Fatalf("accepted %d bytes of %s from a %d-byte file", len(data), dt, len(file))
		}
		if _, err := decodeFloat32s(dt, data); err != nil {
			t.Fatalf("accepted blob does not decode: %v", err)
		}
	})
}
