package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// TestSentencePiece checks Encode against the ids SentencePiece gave for held-out text with the same
// model (testdata/gen_sentencepiece.py wrote both), and that Decode restores each text.
func TestSentencePiece(t *testing.T) {
	tok, err := Load("testdata/sp_slice.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !tok.ByteFallback() || tok.VocabSize() != 1024 {
		t.Fatalf("sp_slice.bin: %d pieces, byte fallback %v; want 1024 with byte fallback", tok.VocabSize(), tok.ByteFallback())
	}
	raw, err := os.ReadFile("testdata/sp_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			Text string
			IDs  []int
		}
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 30 {
		t.Fatalf("only %d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		got := tok.Encode(c.Text, false, false)
		if !slices.Equal(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
			continue
		}
		back, err := tok.Decode(got)
		if err != nil || back != c.Text {
			t.Errorf("Decode(Encode(%q)) = %q, %v", c.Text, back, err)
		}
		withBOS := tok.Encode(c.Text, true, true)
		if !slices.Equal(withBOS[1:len(withBOS)-1], c.IDs) || withBOS[0] != BOS || withBOS[len(withBOS)-1] != EOS {
			t.Errorf("Encode(%q, bos, eos) = %v", c.Text, withBOS)
		}
		if back, _ := tok.Decode(withBOS); back != c.Text {
			t.Errorf("Decode with BOS and EOS: %q, want %q", back, c.Text)
		}
	}
}

// TestTrainQuality trains on the whole corpus at the sizes SentencePiece was trained at and encodes the
// corpus as one string with both vocabularies through Encode: ours must take at most 1.03 times as many
// tokens as SentencePiece's.
func TestTrainQuality(t *testing.T) {
	text := opticks(t)
	sizes := []int{512, 1024, 4096}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, n := range sizes {
		sp, err := Load("testdata/sp_opticks_" + itoa(n) + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		ours, err := Train(text, n)
		if err != nil {
			t.Fatal(err)
		}
		a, b := len(ours.Encode(text, false, false)), len(sp.Encode(text, false, false))
		t.Logf("n=%d: ours %d tokens, SentencePiece's %d: %.4fx", n, a, b, float64(a)/float64(b))
		if float64(a) > 1.03*float64(b) {
			t.Errorf("n=%d: ours takes %d tokens, more than 1.03 x SentencePiece's %d", n, a, b)
		}
	}
}
