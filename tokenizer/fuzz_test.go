package tokenizer

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to Parse: it must return a tokenizer or a *FormatError with an offset
// inside the input, never panic; what it accepts must survive MarshalBinary and Parse, and encode like
// run.c's rescan. The seed corpus in testdata/fuzz/FuzzParse holds valid files and corruptions.
func FuzzParse(f *testing.F) {
	f.Add(rawFile(6, []string{"<unk>", "\n<s>\n", "\n</s>\n", "a", "b", "ab", " "}, []float32{0, 0, 0, -1, -2, 5, -3}), 0)
	f.Add(rawFile(6, []string{"<unk>", "\n<s>\n", "\n</s>\n", "a"}, []float32{0, 0, 0, 0})[:20], 0)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		size = max(0, size%2000)
		tok, err := Parse(data, size)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if fe.Offset < 0 || fe.Offset > int64(len(data)) {
				t.Fatalf("error offset %d outside the %d-byte input: %v", fe.Offset, len(data), err)
			}
			return
		}
		out, err := tok.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse(out, 0)
		if err != nil || !slices.Equal(again.pieces, tok.pieces) || !slices.EqualFunc(again.scores, tok.scores, sameBits) {
			t.Fatalf("re-parsing MarshalBinary's output: %v", err)
		}
		if tok.VocabSize() <= 400 {
			for _, text := range []string{"", "ab a", string(data[:min(len(data), 24)])} {
				if got, want := tok.Encode(text, false, false), scanEncode(tok.pieces, tok.scores, text); !slices.Equal(got, want) {
					t.Fatalf("Encode(%q) = %v, run.c's rescan %v", text, got, want)
				}
			}
		}
	})
}

func sameBits(a, b float32) bool { return a == b || a != a && b != b }

// FuzzEncode encodes arbitrary text (valid UTF-8 or not) with SentencePiece's vocabulary and with one
// trained here: it must never panic, must equal run.c's rescan, and Decode must restore the text. The
// seed corpus in testdata/fuzz/FuzzEncode holds the awkward cases.
func FuzzEncode(f *testing.F) {
	sp, err := Load("testdata/sp_slice.bin")
	if err != nil {
		f.Fatal(err)
	}
	ours, err := Train("the light of the sun, the lights of the bodies; æther\n\n and  the \xff rays", 300)
	if err != nil {
		f.Fatal(err)
	}
	// A vocabulary with spaces inside pieces, as Meta's llama vocabulary has: merged over the whole text.
	spaced, err := New(append(slices.Clone(sp.pieces), "  ", "  a", "e t", "d.\n "), append(slices.Clone(sp.scores), 10, 11, 12, 13))
	if err != nil || spaced.splitSpaces || !sp.splitSpaces || !ours.splitSpaces {
		f.Fatal("the vocabularies do not cover both ways of merging", err)
	}
	f.Add("Light is refracted.")
	f.Add("  a\n\xff\xc3 é🌈 ")
	f.Fuzz(func(t *testing.T, text string) {
		for _, tok := range []*Tokenizer{sp, ours, spaced} {
			ids := tok.Encode(text, true, false)
			back, err := tok.Decode(ids)
			if err != nil || back != text {
				t.Fatalf("Decode(Encode(%q)) = %q, %v", text, back, err)
			}
			if len(text) <= 64 {
				if want := scanEncode(tok.pieces, tok.scores, text); !slices.Equal(ids[1:], want) {
					t.Fatalf("Encode(%q) = %v, run.c's rescan %v", text, ids[1:], want)
				}
			}
		}
	})
}

// FuzzTrain trains on arbitrary text, with and without whitespace pieces: an error (too little text for
// n) or a vocabulary under which Encode gives exactly the trainer's segmentation and run.c's, and Decode
// restores the text.
func FuzzTrain(f *testing.F) {
	f.Add("the light of the sun, the lights; æther\n\n and  the \xff rays", 290)
	f.Add("aaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbb ab ab ab", 275)
	f.Add("def f(x):\n    if x:\n        return  x\n    return   0  \n", 300)
	f.Fuzz(func(t *testing.T, text string, n int) {
		n = NumReserved + 1 + max(0, n%64)
		for _, ws := range []bool{false, true} { // whitespace pieces too
			tr, err := train(text, n, ws, nil)
			if err != nil {
				return
			}
			tok, err := tr.tokenizer()
			if err != nil {
				t.Fatal(err)
			}
			ids := tok.Encode(text, false, false)
			if want := tr.segmentation(text); !slices.Equal(ids, want) {
				t.Fatalf("Train(%q, %d, whitespace pieces %v): Encode gives %v, the trainer %v", text, n, ws, ids, want)
			}
			if want := scanEncode(tok.pieces, tok.scores, text); !slices.Equal(ids, want) {
				t.Fatalf("Train(%q, %d, whitespace pieces %v): Encode gives %v, run.c's rescan %v", text, n, ws, ids, want)
			}
			if back, err := tok.Decode(ids); err != nil || back != text {
				t.Fatalf("round trip: %q, %v", back, err)
			}
			streamed, err := trainReader(strings.NewReader(text), n, TrainOptions{WhitespacePieces: ws}, nil, nil, 8)
			if err != nil || streamed.Fingerprint() != tok.Fingerprint() {
				t.Fatalf("Train(%q, %d, whitespace pieces %v) read 8 bytes at a time: %v, another vocabulary", text, n, ws, err)
			}
		}
	})
}
