package ckpt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// v0Header returns a version 0 header with the given seven fields.
func v0Header(f ...int32) []byte {
	var b []byte
	for _, v := range f {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// v1Header returns a 256-byte version 1 header (with the given version field) and flag.
func v1Header(version int32, flag byte, f ...int32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, llama2Magic)
	b = binary.LittleEndian.AppendUint32(b, uint32(version))
	b = append(b, v0Header(f...)...)
	b = append(b, flag)
	return append(b, make([]byte, 256-len(b))...)
}

// TestLlama2BadInput feeds corrupt, truncated and absurd files to the reader: each is a
// *FormatError naming what is wrong and where.
func TestLlama2BadInput(t *testing.T) {
	tied := encodeLlama2(t, tinyLlama2(true), 0)
	untied := encodeLlama2(t, tinyLlama2(false), 1)
	c := tinyLlama2(true).Config
	embedEnd := 28 + 4*c.Vocab*c.Dim
	withByte := func(b []byte, i int, v byte) []byte {
		b = append([]byte{}, b...)
		b[i] = v
		return b
	}
	withInt32 := func(b []byte, i int, v int32) []byte {
		b = append([]byte{}, b...)
		binary.LittleEndian.PutUint32(b[i:], uint32(v))
		return b
	}
	big := int32(math.MaxInt32)
	cases := []struct {
		name   string
		data   []byte
		offset int64
		tensor string
		want   string
	}{
		{"empty", nil, 0, "", "too short for the 28-byte llama2.c version 0 header"},
		{"short", tied[:20], 20, "", "too short for the 28-byte"},
		{"magic only", v1Header(1, 1)[:4], 4, "", "inside the version field"},
		{"short v1 header", v1Header(1, 1, 4, 6, 2, 2, 1, 5, 3)[:100], 100, "", "too short for the 256-byte llama2.c version 1 header"},
		{"version 2", v1Header(2, 1, 4, 6, 2, 2, 1, 5, 3), 4, "", "version 2 (Q8_0 int8 weights) is not supported"},
		{"version 7", v1Header(7, 1, 4, 6, 2, 2, 1, 5, 3), 4, "", "unknown llama2.c version 7"},
		{"negative dim", v0Header(-4, 6, 2, 2, 1, 5, 3), 0, "", "dim = -4: must be between 1"},
		{"zero layers", v0Header(4, 6, 0, 2, 1, 5, 3), 8, "", "n_layers = 0"},
		{"zero vocab", v0Header(4, 6, 2, 2, 1, 0, 3), 20, "", "vocab_size = 0"},
		{"most negative vocab", v0Header(4, 6, 2, 2, 1, math.MinInt32, 3), 20, "", "vocab_size = -2147483648 (negative: a classifier of its own, of 2147483648 pieces)"},
		{"negative seq", v0Header(4, 6, 2, 2, 1, 5, -3), 24, "", "max_seq_len = -3"},
		{"heads do not divide dim", v0Header(6, 6, 2, 4, 1, 5, 3), 12, "", "n_heads = 4 does not divide dim = 6"},
		{"odd head width", v0Header(6, 6, 2, 2, 1, 5, 3), 12, "", "head width dim/n_heads = 6/2 = 3 is odd"},
		{"kv heads do not divide heads", v0Header(8, 6, 2, 4, 3, 5, 3), 16, "", "n_kv_heads = 3 does not divide n_heads = 4"},
		{"more kv heads than heads", v0Header(8, 6, 2, 2, 4, 5, 3), 16, "", "n_kv_heads = 4 does not divide n_heads = 2"},
		{"negative v1 vocab", v1Header(1, 1, 4, 6, 2, 2, 1, -5, 3), 28, "", "version 1 header: vocab_size = -5"},
		{"v1 flag", withByte(untied, 36, 2), 36, "", "shared_classifier flag is 2"},
		{"v1 padding", withByte(untied, 200, 9), 200, "", "header padding byte is 0x9"},
		{"huge v0", v0Header(1<<30, big, big, 2, 1, big, big), 0, "", "overflow 64 bits"},
		{"huge embedding", v0Header(1<<20, 1<<20, 1, 1<<10, 1<<10, 1<<20, 2), 28, Llama2Embedding, "1099511627776 float32"},
		{"huge layers", append(v0Header(4, 6, big, 2, 1, 5, 3), make([]byte, 4*5*4)...), 108, "layers.0.attention_norm.weight", "run past the end of the 108-byte file"},
		{"truncated in the embedding", tied[:100], 28, Llama2Embedding, "run past the end of the 100-byte file"},
		{"truncated after the embedding", tied[:embedEnd+4], int64(embedEnd), "layers.0.attention_norm.weight", "truncated"},
		{"truncated RoPE table", tied[:len(tied)-4], int64(len(tied) - 4*c.MaxSeqLen), ropeSinName, "truncated"},
		{"truncated classifier", untied[:len(untied)-1], int64(len(untied) - 4*c.Vocab*c.Dim), Llama2Output, "truncated"},
		{"trailing bytes", append(append([]byte{}, tied...), 0, 0, 0, 0), int64(len(tied)), "", "4 bytes after the last tensor"},
		// A version 0 file whose classifier flag says shared but holds an own classifier.
		{"unshared read as shared", withInt32(encodeLlama2(t, tinyLlama2(false), 0), 20, 5), int64(len(tied)), "", "80 bytes after the last tensor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeLlama2(bytes.NewReader(tc.data), int64(len(tc.data)))
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *FormatError", err)
			}
			if fe.Offset != tc.offset || fe.Tensor != tc.tensor || !strings.Contains(fe.Msg, tc.want) {
				t.Fatalf("got offset %d tensor %q: %v\nwant offset %d tensor %q, message containing %q", fe.Offset, fe.Tensor, err, tc.offset, tc.tensor, tc.want)
			}
		})
	}
}

// TestLlama2HugeHeaderAllocatesNothing: a header that claims a model of petabytes, on a small
// file, is refused as truncated before anything of its size is allocated.
func TestLlama2HugeHeaderAllocatesNothing(t *testing.T) {
	data := append(v0Header(1<<14, 1<<16, 1<<16, 1<<7, 1<<7, 1<<20, 1<<16), make([]byte, 1<<16)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeLlama2(bytes.NewReader(data), int64(len(data)))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("got %v, want a truncation error", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing the file allocated %d bytes", n)
	}
}

// TestLlama2ReadFiles: only regular files are read; a missing file is the os error; a defect
// names the path.
func TestLlama2ReadFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadLlama2(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: got %v", err)
	}
	if _, err := ReadLlama2Header(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory header: got %v", err)
	}
	if _, err := ReadLlama2(filepath.Join(dir, "missing.bin")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: got %v", err)
	}
	bad := filepath.Join(dir, "bad.bin")
	if err := os.WriteFile(bad, v0Header(4, 6, 2, 2, 1, 5, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLlama2(bad)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Path != bad || !strings.HasPrefix(err.Error(), bad+": byte 28: tensor \"tok_embeddings.weight\": ") {
		t.Errorf("truncated file: got %v", err)
	}
}
