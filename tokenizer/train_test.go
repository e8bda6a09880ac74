package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
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
		tr, err := train(text, n, false, nil)
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
		want := tr.segmentation(text)
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

// TestTrainPieceLength: a long word repeated many times merges only up to MaxPieceChars characters, and
// Encode still reproduces the trainer's segmentation.
func TestTrainPieceLength(t *testing.T) {
	text := strings.Repeat("Newton's RefrangibilityoftheRaysofLight ", 500) + strings.Repeat("é", 300)
	tr, err := train(text, 318, false, nil) // every merge the text supports
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tr.tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for id := NumReserved; id < tok.VocabSize(); id++ {
		longest = max(longest, utf8.RuneCountInString(tok.Piece(id)))
	}
	if longest != MaxPieceChars {
		t.Errorf("longest piece has %d characters, want %d", longest, MaxPieceChars)
	}
	if !slices.Equal(tok.Encode(text, false, false), tr.segmentation(text)) {
		t.Error("Encode differs from the trainer's segmentation")
	}
	if _, err := Train(strings.Repeat("ab", 10), 300); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("a text too small for n: %v", err)
	}
}

// TestSplitWords pins the pre-tokenization: spaces lead words, newline runs stand alone, and letters,
// digits and other characters never share a word.
func TestSplitWords(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"The Sun's light, 12 Inches.\n\nOf", []string{"The", " Sun", "'", "s", " light", ",", " 12", " Inches", ".", "\n\n", "Of"}},
		{" a  b", []string{"", " a", " ", " b"}},
		{"\nx \n", []string{"", "\n", "x", " ", "\n"}},
		{"é1/2\xff", []string{"é", "1", "/", "2", "\xff"}},
		{"", []string{""}},
	} {
		var got []string
		splitWords(c.text, false, func(w string, first bool) {
			if first != (len(got) == 0) {
				t.Errorf("%q: word %d has first = %v", c.text, len(got), first)
			}
			got = append(got, w)
		})
		if !slices.Equal(got, c.want) {
			t.Errorf("splitWords(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	tok, err := Train(opticks(t), 1024)
	if err != nil {
		t.Fatal(err)
	}
	for id := NumReserved; id < tok.VocabSize(); id++ {
		p := tok.Piece(id)
		class := -1
		for i, r := range p {
			if r == '\n' && strings.Trim(p, "\n") != "" || r == ' ' && i > 0 {
				t.Errorf("piece %d %q joins a newline or an inner space to other text", id, p)
				break
			}
			if r == ' ' || r == '\n' {
				continue
			}
			if c := charClass(r); class >= 0 && c != class {
				t.Errorf("piece %d %q mixes character classes", id, p)
				break
			} else {
				class = c
			}
		}
	}
}

// pythonSource reads the .py files of Python's standard json and email packages (Debian's python3),
// the code corpus of TestTrainWhitespacePieces.
func pythonSource(t *testing.T) string {
	t.Helper()
	var files []string
	for _, pkg := range []string{"json", "email"} {
		m, _ := filepath.Glob("/usr/lib/python3*/" + pkg + "/*.py")
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Skip("Python's standard library is not installed here (apt install python3)")
	}
	var b strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestTrainWhitespacePieces: with WhitespacePieces a run of spaces leads the word after it; a
// 1024-piece vocabulary of Python source then encodes 8 spaces and "return" in at most 3 tokens
// (without the option: 8), Encode reproduces the trainer's segmentation of the whole
// text, the vocabulary can stream, and decoding restores the text.
func TestTrainWhitespacePieces(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a   b", `["a" "   b"]`},
		{"x  \n  y", `["x" "  " "\n" "  y"]`},
		{"  z,", `["  z" ","]`},
	} {
		var got []string
		splitWords(c.text, true, func(w string, first bool) { got = append(got, w) })
		if s := fmt.Sprintf("%q", got); s != c.want {
			t.Errorf("splitWords(%q, ws) = %s, want %s", c.text, s, c.want)
		}
	}
	text := pythonSource(t)
	indent := "        return"
	for _, ws := range []bool{false, true} {
		tr, err := train(text, 1024, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := tr.tokenizer()
		if err != nil {
			t.Fatal(err)
		}
		ids := tok.Encode("x\n"+indent, false, false)[2:] // after "x" and the newline
		t.Logf("whitespace pieces %v: %q is %d tokens", ws, indent, len(ids))
		if ws && len(ids) > 3 || !ws && len(ids) < 8 {
			t.Errorf("whitespace pieces %v: %q is %d tokens: %v", ws, indent, len(ids), ids)
		}
		if !tok.CanStream() {
			t.Errorf("whitespace pieces %v: the vocabulary cannot stream", ws)
		}
		if got, want := tok.Encode(text, false, false), tr.segmentation(text); !slices.Equal(got, want) {
			t.Fatalf("whitespace pieces %v: Encode gives %d tokens, the trainer %d", ws, len(got), len(want))
		}
		if back, err := tok.Decode(tok.Encode(text, false, false)); err != nil || back != text {
			t.Fatalf("whitespace pieces %v: decode does not restore the text (%v)", ws, err)
		}
	}
}
