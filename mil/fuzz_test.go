package mil

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzParse checks that Parse never panics or hangs, that its errors are *SyntaxErrors placed inside
// the input, and that any program it accepts prints to text that parses back to an Equal program and
// prints again identically. Check must not panic on whatever Parse accepts. The seed corpus is the
// programs in testdata plus the real and broken fragments in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, name := range milFiles(f) {
		src, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(builtText))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse("fuzz.mil", src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || p != nil {
				t.Fatalf("error %#v is not a *SyntaxError alone", err)
			}
			if !se.Pos.IsValid() || se.Pos.Line > bytes.Count(src, []byte("\n"))+1 || se.Msg == "" {
				t.Fatalf("error %q is not placed inside the input", err)
			}
			return
		}
		_ = Check(p)
		text := Print(p)
		q, err := Parse("printed.mil", []byte(text))
		if err != nil {
			t.Fatalf("printed text does not parse: %v\n%s", err, text)
		}
		if !Equal(p, q) {
			t.Fatalf("parse(print(p)) is not Equal to p; printed:\n%s", text)
		}
		if again := Print(q); again != text {
			t.Fatalf("printing is not stable:\n%s\nthen:\n%s", text, again)
		}
	})
}
