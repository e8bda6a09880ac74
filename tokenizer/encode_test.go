package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// scanEncode is run.c's encode written out directly: the quadratic rescan for the best pair on every
// merge, the strict > that keeps the leftmost of equal scores. It shares no code with Encode. As Encode
// documents, only pieces from id 3 on (from 259 with byte fallback) are looked up or merged.
func scanEncode(pieces []string, scores []float32, text string) []int {
	bf := len(pieces) >= 259
	for b := 0; b < 256 && bf; b++ {
		bf = pieces[3+b] == "<0x"+strings.ToUpper(string("0123456789abcdef"[b>>4])+string("0123456789abcdef"[b&15]))+">"
	}
	first := 3
	if bf {
		first = 259
	}
	lookup := func(s string) int {
		for id := first; id < len(pieces); id++ { // the lowest id of a repeated piece
			if pieces[id] == s {
				return id
			}
		}
		return -1
	}
	var toks []int
	emit := func(s string) {
		if id := lookup(s); id >= 0 {
			toks = append(toks, id)
		} else if bf {
			for i := 0; i < len(s); i++ {
				toks = append(toks, int(s[i])+3)
			}
		} else {
			toks = append(toks, 0)
		}
	}
	if text != "" {
		emit(" ")
	}
	var buf []byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c&0xC0 != 0x80 {
			buf = buf[:0]
		}
		buf = append(buf, c)
		if i+1 < len(text) && text[i+1]&0xC0 == 0x80 && len(buf) < 4 {
			continue
		}
		emit(string(buf))
		buf = buf[:0]
	}
	for {
		best, bestID, bestIdx := float32(-1e10), -1, -1
		for i := 0; i+1 < len(toks); i++ {
			if toks[i] < first || toks[i+1] < first {
				continue
			}
			id := lookup(pieces[toks[i]] + pieces[toks[i+1]])
			if id >= 0 && scores[id] > best {
				best, bestID, bestIdx = scores[id], id, i
			}
		}
		if bestIdx < 0 {
			return toks
		}
		toks[bestIdx] = bestID
		toks = slices.Delete(toks, bestIdx+1, bestIdx+2)
	}
}

// randomVocab makes a vocabulary over a small alphabet with many equal scores, so that ties, chains of
// merges and pieces formed from several different pairs are common.
func randomVocab(r *rand.Rand, byteFallback bool) ([]string, []float32) {
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
	if byteFallback {
		for b := range 256 {
			pieces = append(pieces, bytePiece(byte(b)))
		}
	}
	alphabet := []string{" ", "a", "b", "c", "é", "\n"}
	pieces = append(pieces, alphabet[:2+r.IntN(len(alphabet)-1)]...)
	for target := len(pieces) + 5 + r.IntN(40); len(pieces) < target; {
		n := 2 + r.IntN(4)
		var s string
		for range n {
			s += alphabet[r.IntN(len(alphabet))]
		}
		pieces = append(pieces, s)
		if r.IntN(8) == 0 {
			pieces = append(pieces, s) // a repeated piece
		}
	}
	scores := make([]float32, len(pieces))
	for i := range scores {
		scores[i] = float32(r.IntN(5))
		if r.IntN(20) == 0 {
			scores[i] = -2e10 // below run.c's floor: never merges
		}
	}
	return pieces, scores
}

func randomText(r *rand.Rand) string {
	parts := []string{" ", "a", "b", "c", "é", "\n", "ab", "  ", "\xc3", "\x80", "z", "\x00"}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// TestEncodeMatchesScan checks the heap encoder against run.c's rescan on random vocabularies and texts,
// and the round trip through Decode.
func TestEncodeMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	split := 0
	for v := range 200 {
		pieces, scores := randomVocab(r, v%2 == 0)
		tok, err := New(pieces, scores)
		if err != nil {
			t.Fatal(err)
		}
		if tok.splitSpaces {
			split++
		}
		for range 20 {
			text := randomText(r)
			got := tok.Encode(text, false, false)
			if want := scanEncode(pieces, scores, text); !slices.Equal(got, want) {
				t.Fatalf("vocab %d, text %q:\n got %v\nwant %v", v, text, got, want)
			}
			if tok.ByteFallback() {
				if back, err := tok.Decode(got); err != nil || back != text {
					t.Fatalf("vocab %d: Decode(Encode(%q)) = %q, %v", v, text, back, err)
				}
			}
		}
	}
}

func TestDecode(t *testing.T) {
	tok, err := Load("testdata/sp_slice.bin")
	if err != nil {
		t.Fatal(err)
	}
	sp := tok.Encode("a b", false, false)
	// <s> drops the next piece's leading space; without it, so does the start of the sequence.
	ids := append(append([]int{BOS}, sp...), EOS, BOS)
	ids = append(ids, sp...)
	if got, err := tok.Decode(ids); err != nil || got != "a ba b" {
		t.Fatalf("Decode(%v) = %q, %v", ids, got, err)
	}
	if got, _ := tok.Decode(append(slices.Clone(sp), sp...)); got != "a b a b" {
		t.Fatalf("two sequences without <s>: %q", got)
	}
	if got, _ := tok.Decode([]int{3 + 'h', 3 + 0xff, 3 + ' '}); got != "h\xff " {
		t.Fatalf("byte pieces: %q", got)
	}
	if _, err := tok.Decode([]int{5, 1024}); err == nil || !strings.Contains(err.Error(), "token 1: id 1024") {
		t.Fatalf("id out of range: %v", err)
	}
	if _, err := tok.Decode([]int{-1}); err == nil {
		t.Fatal("negative id: no error")
	}
}

func TestTokenBytes(t *testing.T) {
	tok, err := Load("testdata/sp_slice.bin")
	if err != nil {
		t.Fatal(err)
	}
	lens := tok.ByteLengths()
	for _, text := range []string{"Light, é and 🌈.", " x\n\xff"} {
		ids := tok.Encode(text, true, true)
		sum := 0
		for _, id := range ids {
			sum += lens[id]
			if lens[id] != tok.TokenBytes(id) {
				t.Fatal("ByteLengths and TokenBytes differ")
			}
		}
		if sum != len(text)+1 { // the text's bytes and the dummy prefix
			t.Errorf("%q: token bytes sum to %d, want %d", text, sum, len(text)+1)
		}
	}
	if lens[Unk] != 0 || lens[BOS] != 0 || lens[EOS] != 0 || lens[3] != 1 || lens[258] != 1 {
		t.Errorf("reserved lengths %v", lens[:4])
	}
}

// TestEncodeInvalidUTF8 encodes every byte value alone and in bad sequences: byte fallback, a round trip.
func TestEncodeInvalidUTF8(t *testing.T) {
	tok, err := Load("testdata/sp_slice.bin")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for b := range 256 {
		texts = append(texts, string([]byte{byte(b)}), "a"+string([]byte{byte(b), byte(b)})+"b")
	}
	texts = append(texts, "\xed\xa0\x80", "\xf0\x9f\x98\x80\x80\x80", "\xe2\x82", " \x80x", "\xc3\xa9\x80")
	for _, text := range texts {
		ids := tok.Encode(text, false, false)
		if back, err := tok.Decode(ids); err != nil || back != text {
			t.Fatalf("Decode(Encode(%q)) = %q, %v", text, back, err)
		}
		if !utf8.ValidString(text) && len(ids) < 2 {
			t.Fatalf("%q: %v", text, ids)
		}
	}
}

// TestRoundTripCorpus: text → ids → text is the identity on the whole corpus, with SentencePiece's
// vocabulary and with ours, which also survives Save and Load with the same ids.
func TestRoundTripCorpus(t *testing.T) {
	text := opticks(t)
	sp, err := Load("testdata/sp_opticks_1024.bin")
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Train(text, 700)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/tok.bin"
	if err := ours.Save(path); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ours.Encode(text, true, false)
	if got := loaded.Encode(text, true, false); !slices.Equal(got, want) {
		t.Fatal("the loaded vocabulary encodes differently")
	}
	for _, tok := range []*Tokenizer{sp, loaded} {
		ids := tok.Encode(text, true, true)
		if back, err := tok.Decode(ids); err != nil || back != text {
			t.Fatalf("round trip over the corpus fails (err %v)", err)
		}
	}
}

// TestEncodeConcurrent encodes from several goroutines with one Tokenizer (run with -race).
func TestEncodeConcurrent(t *testing.T) {
	tok, err := Load("testdata/sp_slice.bin")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("The Rays of Light are refracted; ", 50)
	want := tok.Encode(text, true, true)
	errs := make(chan string, 4)
	for range 4 {
		go func() {
			got := tok.Encode(text, true, true)
			if !slices.Equal(got, want) {
				errs <- "concurrent Encode differs"
				return
			}
			errs <- ""
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
}
