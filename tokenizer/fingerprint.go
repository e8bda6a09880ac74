package tokenizer

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
)

// Fingerprint names the vocabulary: 16 hex digits of a 64-bit FNV-1a hash of every piece and score in
// id order. Equal vocabularies have equal fingerprints; a checkpoint records it to tell whether the
// tokenizer at hand is the one it was trained with.
func (t *Tokenizer) Fingerprint() string {
	h := fnv.New64a()
	var b [8]byte
	for id, p := range t.pieces {
		binary.LittleEndian.PutUint32(b[:4], uint32(len(p)))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(t.scores[id]))
		h.Write(b[:])
		h.Write([]byte(p))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}
