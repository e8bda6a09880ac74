package ckpt

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode: it must return a file or a *FormatError with an
// offset inside the input, never panic; and whatever it accepts must encode and decode back to
// the same content. The seed corpus in testdata/fuzz/FuzzDecode holds valid files (the
// reference file, the sample with every layout) and crafted corruptions.
func FuzzDecode(f *testing.F) {
	f.Add(encode(f, sampleFile(f)))
	f.Add(encode(f, &File{}))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Decode(data)
		if err != nil {
			wantFormatError(t, err, len(data))
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, file); err != nil {
			t.Fatalf("re-encoding a decoded file: %v", err)
		}
		again, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("decoding our own encoding: %v", err)
		}
		sameFile(t, again, file)
		var buf2 bytes.Buffer
		if err := Encode(&buf2, again); err != nil || !bytes.Equal(buf2.Bytes(), buf.Bytes()) {
			t.Fatalf("encoding is not stable (%v)", err)
		}
	})
}

// wantFormatError fails unless err is a *FormatError whose offset lies inside the size-byte input.
func wantFormatError(t *testing.T, err error, size int) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v is not a *FormatError", err)
	}
	if fe.Offset < 0 || fe.Offset > int64(size) {
		t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Offset, size, err)
	}
}
