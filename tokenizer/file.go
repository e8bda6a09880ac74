package tokenizer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/anestar/anestar/internal/atomicfile"
)

// A FormatError is a defect in a tokenizer.bin file: where it is and what is wrong.
type FormatError struct {
	File   string // the file's path, or "" for bytes that came from elsewhere
	Offset int64  // byte offset of the defective field
	ID     int    // id of the piece being read, or -1 in the header
	Msg    string // what is wrong
}

func (e *FormatError) Error() string {
	where := "tokenizer.bin"
	if e.File != "" {
		where = e.File
	}
	if e.ID < 0 {
		return fmt.Sprintf("%s: offset %d: %s", where, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s: offset %d: piece %d: %s", where, e.Offset, e.ID, e.Msg)
}

// Load reads a tokenizer.bin file to its end: every piece it holds.
func Load(path string) (*Tokenizer, error) { return LoadSize(path, 0) }

// LoadSize reads the first vocabSize pieces of a tokenizer.bin file (as llama2.c does, with the size from
// its model's header); vocabSize 0 reads to the end of the file.
func LoadSize(path string, vocabSize int) (*Tokenizer, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data, vocabSize)
	if fe, ok := err.(*FormatError); ok {
		fe.File = path
	}
	return t, err
}

// OpenRegular opens the regular file at path for reading, with its size: a directory, a device or a
// FIFO is an error, not a hang.
func OpenRegular(path string) (*os.File, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, fmt.Errorf("tokenizer: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("tokenizer: %s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("tokenizer: %w", err)
	}
	return f, st.Size(), nil
}

// ReadHead returns the first n bytes of the regular file at path (fewer when it is shorter).
func ReadHead(path string, n int) ([]byte, error) {
	f, size, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, min(int64(n), size))
	k, err := io.ReadFull(f, buf)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return buf[:k], nil
}

// ReadFile reads a whole regular file (a text to encode or train on, a vocabulary, a token file): a
// directory or a device is an error, not a hang.
func ReadFile(path string) ([]byte, error) {
	f, size, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	return data, nil
}

// Parse reads tokenizer.bin bytes: a uint32 max_token_length, then for each id a float32 score, an
// int32 length and that many bytes of piece. vocabSize 0 reads to the end of data; otherwise exactly
// vocabSize pieces are read and what follows is ignored. Any defect is a *FormatError.
func Parse(data []byte, vocabSize int) (*Tokenizer, error) {
	if vocabSize < 0 {
		return nil, &FormatError{ID: -1, Msg: fmt.Sprintf("vocabulary size %d is negative", vocabSize)}
	}
	if len(data) < 4 {
		return nil, &FormatError{ID: -1, Msg: fmt.Sprintf("file of %d bytes is too short for the 4-byte max_token_length", len(data))}
	}
	maxLen := int64(binary.LittleEndian.Uint32(data))
	var pieces []string
	var scores []float32
	off := int64(4)
	for id := 0; vocabSize == 0 && off < int64(len(data)) || id < vocabSize; id++ {
		rest := int64(len(data)) - off
		if rest < 8 {
			msg := fmt.Sprintf("truncated: %d bytes left where the score and length take 8", rest)
			if vocabSize > 0 {
				msg += fmt.Sprintf(" (the vocabulary has %d pieces)", vocabSize)
			}
			return nil, &FormatError{Offset: off, ID: id, Msg: msg}
		}
		score := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		n := int64(int32(binary.LittleEndian.Uint32(data[off+4:])))
		switch {
		case n <= 0:
			return nil, &FormatError{Offset: off + 4, ID: id, Msg: fmt.Sprintf("piece length %d: want at least 1", n)}
		case n > maxLen:
			return nil, &FormatError{Offset: off + 4, ID: id, Msg: fmt.Sprintf("piece length %d exceeds the file's max_token_length %d", n, maxLen)}
		case n > rest-8:
			return nil, &FormatError{Offset: off + 8, ID: id, Msg: fmt.Sprintf("truncated: the %d-byte piece has %d bytes left", n, rest-8)}
		}
		pieces = append(pieces, string(data[off+8:off+8+n]))
		scores = append(scores, score)
		off += 8 + n
	}
	if len(pieces) < 3 {
		return nil, &FormatError{Offset: off, ID: len(pieces), Msg: fmt.Sprintf("only %d pieces: a vocabulary needs at least <unk>, <s> and </s>", len(pieces))}
	}
	return New(pieces, scores)
}

// MarshalBinary returns the tokenizer.bin bytes of t: max_token_length is the longest piece's length,
// as llama2.c's tokenizer.py writes it.
func (t *Tokenizer) MarshalBinary() ([]byte, error) {
	maxLen := 0
	size := 4
	for _, p := range t.pieces {
		maxLen = max(maxLen, len(p))
		size += 8 + len(p)
	}
	if maxLen > math.MaxInt32 {
		return nil, fmt.Errorf("tokenizer: a piece of %d bytes does not fit tokenizer.bin", maxLen)
	}
	var b bytes.Buffer
	b.Grow(size)
	var w [8]byte
	binary.LittleEndian.PutUint32(w[:], uint32(maxLen))
	b.Write(w[:4])
	for id, p := range t.pieces {
		binary.LittleEndian.PutUint32(w[:], math.Float32bits(t.scores[id]))
		binary.LittleEndian.PutUint32(w[4:], uint32(len(p)))
		b.Write(w[:])
		b.WriteString(p)
	}
	return b.Bytes(), nil
}

// Save writes t to path as tokenizer.bin, atomically: a crash leaves the old file or the new one.
func (t *Tokenizer) Save(path string) error {
	data, err := t.MarshalBinary()
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	return nil
}
