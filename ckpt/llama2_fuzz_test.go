package ckpt

import (
	"bytes"
	"testing"
)

// FuzzDecodeLlama2 feeds arbitrary bytes to DecodeLlama2: it must return a model or a
// *FormatError with an offset inside the input, never panic or allocate beyond the input's size;
// and what it accepts must export in its own version to the same bytes (version 0's RoPE
// tables aside, which are recomputed) and read back to the same model. The seed corpus in
// testdata/fuzz/FuzzDecodeLlama2 holds small valid files of both versions and crafted defects.
func FuzzDecodeLlama2(f *testing.F) {
	for _, shared := range []bool{true, false} {
		for v := range 2 {
			f.Add(encodeLlama2(f, tinyLlama2(shared), v))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeLlama2(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			wantFormatError(t, err, len(data))
			return
		}
		out := encodeLlama2(t, m, m.Version)
		lo, hi := len(out), len(out)
		if m.Version == 0 {
			lo, hi = ropeRange(m.Config)
		}
		if len(out) != len(data) || !bytes.Equal(out[:lo], data[:lo]) || !bytes.Equal(out[hi:], data[hi:]) {
			t.Fatalf("version %d export of the decoded model differs from the input", m.Version)
		}
		sameLlama2(t, decodeLlama2(t, out), m)
	})
}
