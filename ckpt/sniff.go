package ckpt

import "encoding/binary"

// SniffLen is how many bytes of a file LooksLikeSafetensors needs.
const SniffLen = 9

// LooksLikeSafetensors tells a safetensors file from a llama2.c model file by its first
// SniffLen bytes: a safetensors file starts with a header length under 2^32 and the JSON's '{'.
// A llama2.c file never does: version 1 starts with its magic and a version, version 0 with dim
// and hidden_dim, which read as one little-endian uint64 is at least 2^32 for any hidden_dim >= 1.
func LooksLikeSafetensors(prefix []byte) bool {
	return len(prefix) >= SniffLen && binary.LittleEndian.Uint64(prefix) < 1<<32 && prefix[8] == '{'
}
