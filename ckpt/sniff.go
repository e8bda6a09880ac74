package ckpt

import (
	"encoding/binary"
	"io"
	"strings"

	"github.com/anestar/anestar/internal/safefile"
)

// SniffLen is how many bytes of a file LooksLikeSafetensors needs.
const SniffLen = 9

// LooksLikeSafetensors tells a safetensors file from a llama2.c model file by its first
// SniffLen bytes: a safetensors file starts with a header length under 2^32 and the JSON's '{'.
// A llama2.c file never does: version 1 starts with its magic and a version, version 0 with dim
// and hidden_dim, which read as one little-endian uint64 is at least 2^32 for any hidden_dim >= 1.
func LooksLikeSafetensors(prefix []byte) bool {
	return len(prefix) >= SniffLen && binary.LittleEndian.Uint64(prefix) < 1<<32 && prefix[8] == '{'
}

// IsLlama2File tells whether path is to be read as a llama2.c model file rather than a safetensors
// checkpoint: a name not ending in .safetensors whose first SniffLen bytes are not a safetensors
// header. A file that cannot be opened as a regular file is not one (the reader that is then tried names the error).
func IsLlama2File(path string) bool {
	if strings.HasSuffix(path, ".safetensors") {
		return false
	}
	f, _, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, SniffLen)
	n, _ := io.ReadFull(f, b)
	return !LooksLikeSafetensors(b[:n])
}
