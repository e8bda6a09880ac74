package tokenizer

import (
	"strings"
	"testing"
)

// Training on a text read in small pieces learns the vocabulary of training on it whole, with and
// without whitespace pieces, whatever the piece size (down to pieces of a word or two).
func TestTrainReaderSameVocabulary(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		n    int
	}{
		{"opticks", opticks(t)[:200_000], 700},
		{"python", pythonSource(t), 600},
		{"spaces", "  lead   and  trail  \n\n  x  y   z    \n  ", 270},
	} {
		for _, ws := range []bool{false, true} {
			opts := TrainOptions{WhitespacePieces: ws}
			whole, err := TrainWith(c.text, c.n, opts, nil)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, chunk := range []int{7, 64, 4096, 1 << 20} {
				var last int64
				got, err := trainReader(strings.NewReader(c.text), c.n, opts, func(b int64) { last = b }, nil, chunk)
				if err != nil {
					t.Fatalf("%s ws=%v chunk %d: %v", c.name, ws, chunk, err)
				}
				if got.Fingerprint() != whole.Fingerprint() || last != int64(len(c.text)) {
					t.Errorf("%s ws=%v chunk %d: fingerprint %s, whole text's %s (read %d of %d bytes)", c.name, ws, chunk, got.Fingerprint(), whole.Fingerprint(), last, len(c.text))
				}
			}
		}
	}
	if _, err := TrainReader(strings.NewReader(""), 300, TrainOptions{}, nil, nil); err == nil || !strings.Contains(err.Error(), "no text to train on") {
		t.Errorf("an empty text: %v", err)
	}
}
