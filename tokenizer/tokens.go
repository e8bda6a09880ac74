package tokenizer

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

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
		return fmt.Errorf("tokenizer: %w", err)
	}
	return nil
}

// ParseTokens reads a token file's bytes: little-endian uint16 ids, each below vocabSize. An odd length
// or an id out of range is an error naming the token's position and byte offset.
func ParseTokens(data []byte, vocabSize int) ([]int, error) {
	ids, err := parseTokens(data, vocabSize)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
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
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return ids, nil
}

// LoadTokensFloat32 reads the token file at path as LoadTokens does, into float32 ids (exact below
// 2^24) in a slice that alloc returns for the file's token count (alloc may refuse: a tensor too large
// for the memory left), reading the file a MiB at a time: memory is the result alone.
func LoadTokensFloat32(path string, vocabSize int, alloc func(n int) ([]float32, error)) ([]float32, error) {
	if err := checkTokenVocab(vocabSize); err != nil {
		return nil, err
	}
	f, size, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkTokenLength(f, path, size); err != nil {
		return nil, err
	}
	out, err := alloc(int(size / 2))
	if err != nil {
		return nil, err
	}
	err = scanTokens(f, path, size, vocabSize, func(i int64, b []byte) {
		for j := 0; j < len(b); j += 2 {
			out[i] = float32(binary.LittleEndian.Uint16(b[j:]))
			i++
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkTokenLength refuses a token file f (at path, of size bytes) of odd length, saying so when it
// reads as text.
func checkTokenLength(f *os.File, path string, size int64) error {
	if size%2 == 0 {
		return nil
	}
	head := make([]byte, min(size, 4096))
	n, _ := f.ReadAt(head, 0)
	hint := ""
	if LooksLikeText(head[:n]) {
		hint = ": the file looks like text: give it as text (a name not ending in .bin) or encode it first (anestar tokenize)"
	}
	return fmt.Errorf("tokenizer: %s: offset %d: odd length %d: a token file holds 2-byte ids%s", path, size-1, size, hint)
}

// scanTokens reads the token file f (at path, of an even size in bytes) from its start a MiB at a
// time, checking that every id lies below vocabSize; visit gets each piece's first token index and
// its bytes (valid until visit returns).
func scanTokens(f *os.File, path string, size int64, vocabSize int, visit func(i int64, b []byte)) error {
	buf := make([]byte, 1<<20)
	var head []byte // the file's first bytes, to say so when a text was given as tokens
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && !(err == io.EOF && off+int64(n) == size) {
			return fmt.Errorf("tokenizer: %s: offset %d: %w (the file changed while read?)", path, off, err)
		}
		if head == nil {
			head = append([]byte(nil), buf[:min(n, 4096)]...)
		}
		for j := 0; j < n; j += 2 {
			if id := binary.LittleEndian.Uint16(buf[j:]); int(id) >= vocabSize {
				i := (off + int64(j)) / 2
				if LooksLikeText(head) {
					return fmt.Errorf("tokenizer: %s: token %d (offset %d): id %d outside the vocabulary of %d pieces: the file looks like text, not uint16 token ids: give it as text (a name not ending in .bin) or encode it first (anestar tokenize)", path, i, 2*i, id, vocabSize)
				}
				return fmt.Errorf("tokenizer: %s: token %d (offset %d): id %d outside the vocabulary of %d pieces", path, i, 2*i, id, vocabSize)
			}
		}
		visit(off/2, buf[:n])
		off += int64(n)
	}
	return nil
}

// LooksLikeText reports whether data (a file's first bytes) reads as text: valid UTF-8 without NUL or
// other control bytes but tab, newline and carriage return. A token file of small ids is full of
// zero bytes; one of large ids rarely makes valid UTF-8 for long.
func LooksLikeText(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 && len(data)-i >= utf8.UTFMax { // a cut rune at the end is fine
			return false
		}
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
		i += size
	}
	return true
}
