package tokenizer

import (
	"fmt"
	"math"
	"strings"
)

// Ids of the reserved pieces every llama2.c vocabulary starts with.
const (
	Unk = 0 // <unk>: stands for text the vocabulary cannot spell (never produced when the vocabulary has byte pieces)
	BOS = 1 // <s>: beginning of a sequence
	EOS = 2 // </s>: end of a sequence

	// NumReserved counts the reserved pieces of a byte-fallback vocabulary: the three above and the 256 byte
	// pieces <0x00>..<0xFF> (ids 3..258). A trained vocabulary of size N has N-NumReserved learned pieces.
	NumReserved = 3 + 256

	byteBase = 3 // id of the byte piece <0x00>
)

// minScore is run.c's starting best score: a piece whose score is not above it never forms by merging.
const minScore = -1e10

// A Tokenizer is a llama2.c vocabulary: pieces with scores, indexed by id. It is immutable once made
// and safe for concurrent use.
type Tokenizer struct {
	pieces       []string         // piece text by id, as stored in tokenizer.bin
	scores       []float32        // merge priority by id: the higher, the earlier a pair merges into it
	lookup       map[string]int32 // text pieces (not the reserved ones) to their lowest id
	byteFallback bool             // ids 3..258 are exactly <0x00>..<0xFF>
	space        int32            // id of the " " piece, or -1
	splitSpaces  bool             // no text piece holds a space after a non-space (pieces of spaces alone may): no merge crosses the start of a run of spaces
}

// New makes a Tokenizer from pieces and their scores (same length, at least the three reserved pieces).
// Pieces must be non-empty. When ids 3..258 are exactly "<0x00>".."<0xFF>" the vocabulary has byte
// fallback: text it cannot spell becomes byte pieces; otherwise it becomes <unk>.
func New(pieces []string, scores []float32) (*Tokenizer, error) {
	if len(pieces) != len(scores) {
		return nil, fmt.Errorf("tokenizer: %d pieces but %d scores", len(pieces), len(scores))
	}
	if len(pieces) < 3 {
		return nil, fmt.Errorf("tokenizer: %d pieces: a vocabulary needs at least <unk>, <s> and </s> (ids 0, 1, 2)", len(pieces))
	}
	for i, p := range pieces {
		if p == "" {
			return nil, fmt.Errorf("tokenizer: piece %d is empty", i)
		}
	}
	t := &Tokenizer{
		pieces: append([]string(nil), pieces...),
		scores: append([]float32(nil), scores...),
		lookup: make(map[string]int32, len(pieces)),
		space:  -1,
	}
	t.byteFallback = len(pieces) >= NumReserved
	for b := 0; b < 256 && t.byteFallback; b++ {
		t.byteFallback = pieces[byteBase+b] == bytePiece(byte(b))
	}
	for id := len(pieces) - 1; id >= 0; id-- { // backwards: the lowest id of a repeated piece wins
		if t.isText(int32(id)) {
			t.lookup[pieces[id]] = int32(id)
		}
	}
	t.splitSpaces = true
	for p := range t.lookup {
		if strings.IndexByte(p[1:], ' ') >= 0 && strings.Trim(p, " ") != "" { // a space after a non-space
			t.splitSpaces = false
			break
		}
	}
	if id, ok := t.lookup[" "]; ok {
		t.space = id
	}
	return t, nil
}

// bytePiece is the piece of byte b in a byte-fallback vocabulary, e.g. "<0x0A>".
func bytePiece(b byte) string { return fmt.Sprintf("<0x%02X>", b) }

// isText reports whether id's piece stands for its own text: not <unk>, <s>, </s> or a byte piece.
// Only text pieces are looked up in the input or formed by merging.
func (t *Tokenizer) isText(id int32) bool {
	if id < 3 {
		return false
	}
	return !t.byteFallback || id >= NumReserved
}

// VocabSize is the number of pieces.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// Piece returns the text of piece id as stored (a space where SentencePiece writes ▁), or "" when id
// is out of range.
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// Score returns the score of piece id (NaN when id is out of range).
func (t *Tokenizer) Score(id int) float32 {
	if id < 0 || id >= len(t.scores) {
		return float32(math.NaN())
	}
	return t.scores[id]
}

// ByteFallback reports whether ids 3..258 are the byte pieces <0x00>..<0xFF>.
func (t *Tokenizer) ByteFallback() bool { return t.byteFallback }

// TokenBytes returns how many bytes of text piece id stands for, the measure of bits per byte: the
// UTF-8 length of its piece (a leading space included), 1 for a byte piece, 0 for <unk>, <s> and </s>
// and for an id out of range.
func (t *Tokenizer) TokenBytes(id int) int {
	switch {
	case id < 3 || id >= len(t.pieces):
		return 0
	case !t.isText(int32(id)):
		return 1
	}
	return len(t.pieces[id])
}

// ByteLengths returns TokenBytes of every id, in id order.
func (t *Tokenizer) ByteLengths() []int {
	n := make([]int, len(t.pieces))
	for id := range n {
		n[id] = t.TokenBytes(id)
	}
	return n
}
