package tokenizer

import (
	"os"
	"slices"
	"strconv"
	"testing"
)

// opticks returns the text of data/Isaac.Newton-Opticks.txt.
func opticks(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTrainSegmentation trains on the corpus and checks that Encode reproduces the trainer's own
// segmentation of the whole text, that decoding restores the text, and that the vocabulary survives
// Save and Load with the same ids.
func TestTrainSegmentation(t *testing.T) {
	text := opticks(t)
	for _, n := range []int{300, 1024} {
		tr, err := train(text, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tr.tokenizer()
		if err != nil {
			t.Fatal(err)
		}
		if tok.VocabSize() != n {
			t.Fatalf("n=%d: vocabulary of %d pieces", n, tok.VocabSize())
		}
		want := tr.segmentation()
		got := tok.Encode(text, false, false)
		if !slices.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("n=%d: Encode gives %d tokens, the trainer %d; first difference at token %d", n, len(got), len(want), i)
		}
		back, err := tok.Decode(got)
		if err != nil || back != text {
			t.Fatalf("n=%d: decode does not restore the text (err %v)", n, err)
		}
		t.Logf("n=%d: %d tokens, %.3f bytes/token", n, len(got), float64(len(text))/float64(len(got)))
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
