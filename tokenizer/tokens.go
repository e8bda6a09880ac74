package tokenizer

import (
	"encoding/binary"
	"fmt"

	"github.com/anestar/anestar/internal/atomicfile"
)

// MaxTokenFileVocab is the largest vocabulary whose ids fit a uint16 token file.
const MaxTokenFileVocab = 1 << 16

// checkTokenVocab refuses a vocabulary too large for uint16 ids.
func checkTokenVocab(vocabSize int) error {
	if vocabSize < 1 || vocabSize > MaxTokenFileVocab {
		return fmt.Errorf("tokenizer: a vocabulary of %d pieces does not fit a uint16 token file (1 to %d pieces)", vocabSize, MaxTokenFileVocab)
	}
	return nil
}

// AppendTokens appends ids to dst as little-endian uint16 values. Every id must lie in [0, vocabSize).
func AppendTokens(dst []byte, ids []int, vocabSize int) ([]byte, error) {
	if err := checkTokenVocab(vocabSize); err != nil {
		return dst, err
	}
	for i, id := range ids {
		if id < 0 || id >= vocabSize {
			return dst, fmt.Errorf("tokenizer: token %d: id %d outside the vocabulary of %d pieces", i, id, vocabSize)
		}
		dst = binary.LittleEndian.AppendUint16(dst, uint16(id))
	}
	return dst, nil
}

// SaveTokens writes ids to path as a token file (little-endian uint16, no header), atomically.
func SaveTokens(path string, ids []int, vocabSize int) error {
	data, err := AppendTokens(make([]byte, 0, 2*len(ids)), ids, vocabSize)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("tokenizer: %v", err)
	}
	return nil
}

// ParseTokens reads a token file's bytes: little-endian uint16 ids, each below vocabSize. An odd length
// or an id out of range is an error naming the token's position and byte offset.
func ParseTokens(data []byte, vocabSize int) ([]int, error) {
	ids, err := parseTokens(data, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %v", err)
	}
	return ids, nil
}

func parseTokens(data []byte, vocabSize int) ([]int, error) {
	if vocabSize < 1 || vocabSize > MaxTokenFileVocab {
		return nil, fmt.Errorf("a vocabulary of %d pieces does not fit a uint16 token file (1 to %d pieces)", vocabSize, MaxTokenFileVocab)
	}
	if len(data)%2 != 0 {
		return nil, fmt.Errorf("offset %d: odd length %d: a token file holds 2-byte ids", len(data)-1, len(data))
	}
	ids := make([]int, len(data)/2)
	for i := range ids {
		id := int(binary.LittleEndian.Uint16(data[2*i:]))
		if id >= vocabSize {
			return nil, fmt.Errorf("token %d (offset %d): id %d outside the vocabulary of %d pieces", i, 2*i, id, vocabSize)
		}
		ids[i] = id
	}
	return ids, nil
}

// LoadTokens reads the token file at path (see ParseTokens).
func LoadTokens(path string, vocabSize int) ([]int, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	ids, err := parseTokens(data, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %v", path, err)
	}
	return ids, nil
}
