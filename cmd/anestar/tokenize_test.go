package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/tokenizer"
)

const spVocab = "../../tokenizer/testdata/sp_slice.bin"

func TestTokenizeIDs(t *testing.T) {
	tok, err := tokenizer.Load(spVocab)
	if err != nil {
		t.Fatal(err)
	}
	text := "Newton's  Opticks, 1704 é\n"
	code, out, errs := runCkptCLI("tokenize", "-t", spVocab, "--ids", text)
	if code != exitOK {
		t.Fatalf("code %d: %s", code, errs)
	}
	if want := joinInts(tok.Encode(text, false, false)) + "\n"; out != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if !strings.Contains(errs, "26 chars,") || !strings.Contains(errs, "chars/token") {
		t.Errorf("stderr %q lacks the counts", errs)
	}
}

// TestTokenizeFiles trains, encodes, decodes and re-encodes a text file through the command.
func TestTokenizeFiles(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("The light of the Sun, refracted by a Prism, is separated into Colours.\n", 40) + "café ✓\n"
	in := filepath.Join(dir, "in.txt")
	os.WriteFile(in, []byte(text), 0o644)
	vocab, out1, out2 := filepath.Join(dir, "tok.bin"), filepath.Join(dir, "a.bin"), filepath.Join(dir, "b.bin")

	code, _, errs := runCkptCLI("tokenize", "--train", "300", "--save", vocab, in, "-o", out1)
	if code != exitOK || !strings.Contains(errs, "learned 300 pieces") || !strings.Contains(errs, "chars/token") {
		t.Fatalf("train: code %d: %s", code, errs)
	}
	tok, err := tokenizer.Load(vocab)
	if err != nil || tok.VocabSize() != 300 {
		t.Fatalf("saved vocabulary: %v", err)
	}
	ids, err := tokenizer.LoadTokens(out1, 300)
	if err != nil {
		t.Fatal(err)
	}
	if want := tok.Encode(text, false, false); joinInts(ids) != joinInts(want) {
		t.Fatal("the token file differs from Encode")
	}
	if code, _, errs := runCkptCLI("tokenize", "-t", vocab, in, "-o", out2); code != exitOK {
		t.Fatalf("encode: code %d: %s", code, errs)
	}
	a, _ := os.ReadFile(out1)
	b, _ := os.ReadFile(out2)
	if string(a) != string(b) {
		t.Fatal("encoding with the saved vocabulary gives other tokens")
	}
	code, out, errs := runCkptCLI("tokenize", "-t", vocab, "--decode", out1)
	if code != exitOK || out != text {
		t.Fatalf("decode: code %d, %d bytes out, want %d: %s", code, len(out), len(text), errs)
	}
	if !strings.Contains(errs, "tokens,") {
		t.Errorf("decode stderr %q", errs)
	}
	// A token file with an id beyond the vocabulary names its position.
	os.WriteFile(out2, []byte{5, 0, 0x2c, 1}, 0o644)
	if code, _, errs := runCkptCLI("tokenize", "-t", vocab, "--decode", out2); code != exitError || !strings.Contains(errs, "token 1 (offset 2): id 300") {
		t.Errorf("bad token file: code %d: %s", code, errs)
	}
	// A truncated vocabulary names the offset and the piece.
	bad := filepath.Join(dir, "bad.bin")
	data, _ := os.ReadFile(vocab)
	os.WriteFile(bad, data[:len(data)-2], 0o644)
	if code, _, errs := runCkptCLI("tokenize", "-t", bad, "--ids", "x"); code != exitError || !strings.Contains(errs, "piece 299") || !strings.Contains(errs, "offset") {
		t.Errorf("truncated vocabulary: code %d: %s", code, errs)
	}
}

func TestTokenizeUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{nil, "need -t"},
		{[]string{"-t", "x.bin", "--train", "300", "in.txt"}, "exclude each other"},
		{[]string{"--train", "300", "in.txt"}, "needs --save"},
		{[]string{"--train", "259", "--save", "x", "in.txt"}, "more than the 259 reserved"},
		{[]string{"-t", "x.bin", "in.txt"}, "need -o"},
		{[]string{"-t", "x.bin", "--ids", "a", "in.txt"}, "extra argument"},
		{[]string{"-t", "x.bin", "--decode", "--ids", "a"}, "exclude each other"},
		{[]string{"-t", "x.bin", "a.txt", "b.txt", "-o", "o"}, "want one input file"},
		{[]string{"--bogus"}, "unknown flag"},
	} {
		code, _, errs := runCkptCLI(append([]string{"tokenize"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errs, c.msg) {
			t.Errorf("%v: code %d, stderr %q; want usage error %q", c.args, code, errs, c.msg)
		}
	}
	if code, out, _ := runCkptCLI("tokenize", "--help"); code != exitOK || !strings.Contains(out, `--ids "some text"`) {
		t.Errorf("--help: code %d\n%s", code, out)
	}
}

func TestLineProgress(t *testing.T) {
	var b strings.Builder
	p := newLineProgress(&b, true)
	p.interval = 0
	p.show("encoding: %d%%", 50)
	p.show("encoding: %d%%", 75)
	p.clear()
	if got := b.String(); got != "encoding: 50%\nencoding: 75%\n" {
		t.Errorf("progress lines %q", got)
	}
	b.Reset()
	off := newLineProgress(&b, false)
	off.interval = 0
	off.show("x")
	if b.Len() != 0 {
		t.Errorf("a small input shows progress: %q", b.String())
	}
}

// An output that names an input or the other output (through a link too) is refused before anything is
// written, and every file is left as it was.
func TestTokenizeRefusesCollisions(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	text := strings.Repeat("Light is refracted by a Prism.\n", 30)
	os.WriteFile(in, []byte(text), 0o644)
	vocab := filepath.Join(dir, "v.bin")
	if code, _, errs := runCkptCLI("tokenize", "--train", "300", "--save", vocab, in); code != exitOK {
		t.Fatalf("train: %d %s", code, errs)
	}
	link := filepath.Join(dir, "link.txt")
	os.Symlink(in, link)
	vocabBytes, _ := os.ReadFile(vocab)
	for _, args := range [][]string{
		{"--train", "300", "--save", in, in},
		{"--train", "300", "--save", link, in},
		{"-t", vocab, in, "-o", in},
		{"-t", vocab, in, "-o", vocab},
		{"--train", "300", "--save", vocab, in, "-o", vocab},
	} {
		code, _, errs := runCkptCLI(append([]string{"tokenize"}, args...)...)
		if code != exitError || !strings.Contains(errs, "is the same file as") {
			t.Errorf("%v: exit %d, %q; want a refusal (exit %d)", args, code, errs, exitError)
		}
		if got, _ := os.ReadFile(in); string(got) != text {
			t.Fatalf("%v changed the input text", args)
		}
		if got, _ := os.ReadFile(vocab); string(got) != string(vocabBytes) {
			t.Fatalf("%v changed the vocabulary", args)
		}
	}
}

// TestTokenizeWhitespacePieces: --whitespace-pieces learns pieces of consecutive spaces, so indented
// code takes fewer tokens; the token file written streams (the vocabulary holds no space after a
// non-space) and equals Encode; --whitespace-pieces without --train is a usage error.
func TestTokenizeWhitespacePieces(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("def f(x):\n    if x:\n        return x + 1\n    return 0\n\n", 60) + string(mustRead(t, "../../data/Isaac.Newton-Opticks.txt")[:20000])
	in := filepath.Join(dir, "code.py")
	os.WriteFile(in, []byte(text), 0o644)
	count := func(flags ...string) int {
		vocab, out := filepath.Join(dir, "v.bin"), filepath.Join(dir, "t.bin")
		args := append([]string{"tokenize", "-q", "--train", "700", "--save", vocab, in, "-o", out}, flags...)
		if code, _, errs := runCkptCLI(args...); code != exitOK {
			t.Fatalf("%v: code %d: %s", flags, code, errs)
		}
		tok, err := tokenizer.Load(vocab)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := tokenizer.LoadTokens(out, 700)
		if err != nil {
			t.Fatal(err)
		}
		if want := tok.Encode(text, false, false); joinInts(ids) != joinInts(want) {
			t.Fatalf("%v: the token file differs from Encode", flags)
		}
		if !tok.CanStream() {
			t.Fatalf("%v: the vocabulary cannot stream", flags)
		}
		return len(tok.Encode("x\n        return", false, false)) - 2 // after "x" and the newline
	}
	plain, spaced := count(), count("--whitespace-pieces")
	t.Logf("8 spaces and return: %d tokens, %d with whitespace pieces", plain, spaced)
	if spaced > 3 || plain <= spaced {
		t.Errorf("8 spaces and return: %d tokens, %d with whitespace pieces", plain, spaced)
	}
	if code, _, errs := runCkptCLI("tokenize", "-t", filepath.Join(dir, "v.bin"), "--whitespace-pieces", in, "-o", filepath.Join(dir, "u.bin")); code != exitUsage || !strings.Contains(errs, "goes with --train") {
		t.Errorf("--whitespace-pieces without --train: code %d: %s", code, errs)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
