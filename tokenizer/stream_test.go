package tokenizer

import (
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// streamIDs encodes text with encodeStream in chunks of chunk bytes, on 1 to 4 workers (as chunk
// says), and returns the ids emitted.
func streamIDs(t *testing.T, tok *Tokenizer, text string, bos bool, chunk int) []int {
	t.Helper()
	var got []int
	err := tok.encodeStreamOn(strings.NewReader(text), bos, func(ids []int) error {
		got = append(got, ids...)
		return nil
	}, nil, chunk, 1+chunk%4)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestEncodeStreamMatchesEncode: on random vocabularies that can stream (pieces of spaces alone among
// them) and random texts (runs of spaces, newlines, invalid UTF-8, NUL), chunks of 1 to 9 bytes give
// Encode's ids, <s> included, and Encode's are run.c's (a rescan of the whole text).
func TestEncodeStreamMatchesEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	tested, spaceRuns := 0, 0
	for v := range 200 {
		pieces, scores := randomVocab(r, v%2 == 0)
		for i, p := range pieces { // no space after a non-space (pieces of spaces alone stay): a vocabulary that can stream
			if i > 2 && strings.Contains(p[1:], " ") && strings.Trim(p, " ") != "" {
				pieces[i] = strings.ReplaceAll(p[:1]+strings.ReplaceAll(p[1:], " ", "b"), "\x00", "")
			}
		}
		tok, err := New(pieces, scores)
		if err != nil {
			t.Fatal(err)
		}
		if !tok.CanStream() {
			continue
		}
		tested++
		for _, p := range pieces[3:] {
			if len(p) > 1 && strings.Trim(p, " ") == "" {
				spaceRuns++
				break
			}
		}
		for range 20 {
			text := randomText(r) + randomText(r)
			bos := r.IntN(2) == 0
			want := tok.Encode(text, bos, false)
			scan := scanEncode(pieces, scores, text) // run.c's rescan of the whole text
			if bos {
				scan = append([]int{BOS}, scan...)
			}
			if !slices.Equal(want, scan) {
				t.Fatalf("vocab %d, text %q: Encode %v, run.c's rescan %v", v, text, want, scan)
			}
			for chunk := 1; chunk < 10; chunk++ {
				if got := streamIDs(t, tok, text, bos, chunk); !slices.Equal(got, want) {
					t.Fatalf("vocab %d, text %q, chunks of %d: got %v, want %v", v, text, chunk, got, want)
				}
			}
		}
	}
	if tested < 50 || spaceRuns < 20 {
		t.Fatalf("only %d vocabularies could stream, %d of them with pieces of spaces alone", tested, spaceRuns)
	}
}

// TestEncodeStreamCorpus streams the shipped corpus with a vocabulary trained here and with
// SentencePiece's (BPE, 1024 pieces) in chunks of 64 KiB: Encode's ids; the pieces given to progress make the text.
func TestEncodeStreamCorpus(t *testing.T) {
	data, err := os.ReadFile("../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	trained, err := Train(text[:200000], 600)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Load("testdata/sp_opticks_1024.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !sp.CanStream() {
		t.Fatal("SentencePiece's BPE vocabulary cannot stream: a piece holds a space inside")
	}
	for _, tok := range []*Tokenizer{trained, sp} {
		want := tok.Encode(text, false, false)
		var got []int
		var last int64
		var pieces strings.Builder
		err := tok.encodeStream(strings.NewReader(text), false, func(ids []int) error {
			got = append(got, ids...)
			return nil
		}, func(piece []byte, read int64) { pieces.Write(piece); last = read }, 64<<10)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || last != int64(len(text)) || pieces.String() != text {
			t.Fatalf("%d ids streamed, %d whole (equal %v); %d bytes read of %d; the pieces make the text: %v",
				len(got), len(want), slices.Equal(got, want), last, len(text), pieces.String() == text)
		}
	}
}

// TestEncodeStreamErrors: a vocabulary whose pieces hold spaces inside cannot stream; emit's and the
// reader's errors come back.
func TestEncodeStreamErrors(t *testing.T) {
	spaced, err := New([]string{"<unk>", "<s>", "</s>", " ", "a", " a", "a a"}, []float32{0, 0, 0, 0, 0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if spaced.CanStream() || spaced.EncodeStream(strings.NewReader("a a"), false, func([]int) error { return nil }, nil) == nil {
		t.Error("a vocabulary with a space inside a piece streamed")
	}
	tok, err := Train("a b c a b", 262)
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	if err := tok.EncodeStream(strings.NewReader("a b c"), false, func([]int) error { return stop }, nil); err != stop {
		t.Errorf("emit's error: got %v", err)
	}
	if err := tok.EncodeStream(errReader{}, false, func([]int) error { return nil }, nil); err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("the reader's error: got %v", err)
	}
	// emit fails at the third of many pieces, on several workers: nothing more is emitted, and it returns.
	calls := 0
	err = tok.encodeStreamOn(strings.NewReader(strings.Repeat("a b c ", 5000)), false, func([]int) error {
		if calls++; calls == 3 {
			return stop
		}
		return nil
	}, nil, 16, 4)
	if err != stop || calls != 3 {
		t.Errorf("emit's error on 4 workers: %v after %d calls", err, calls)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("broken") }

// TestLooksLikeText: text (UTF-8, a rune cut at the end) reads as text; token ids, NUL and other control
// bytes, invalid UTF-8 inside do not.
func TestLooksLikeText(t *testing.T) {
	for s, want := range map[string]bool{
		"Light is refracted.\n\tyé": true, "cut é"[:5]: true, "": false,
		"\x01\x00\x05\x00": false, "a\x00b": false, "a\xffbcdefgh": false, "a\x1bb": false,
	} {
		if got := LooksLikeText([]byte(s)); got != want {
			t.Errorf("LooksLikeText(%q) = %v, want %v", s, got, want)
		}
	}
	f := t.TempDir() + "/t.bin"
	os.WriteFile(f, []byte("Light is refracted. "), 0o644) // an even length of text as ids above 300
	if _, err := LoadTokensFloat32(f, 300, func(n int) ([]float32, error) { return make([]float32, n), nil }); err == nil || !strings.Contains(err.Error(), "looks like text") {
		t.Errorf("a text read as tokens: %v", err)
	}
	if head, err := ReadHead(f, 5); err != nil || string(head) != "Light" {
		t.Errorf("ReadHead: %q, %v", head, err)
	}
}
