package numcsv

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	text := "1, 2.5,3\n\n-4,5e-1, 6 \n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("a,b,c\n" + text))
	zw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
		skip int
	}{{"plain", []byte(text), 0}, {"gzip with a header", gz.Bytes(), 1}} {
		tab, err := Read(bytes.NewReader(tc.in), tc.skip)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := []float32{1, 2.5, 3, -4, 0.5, 6}
		if tab.Rows != 2 || tab.Cols != 3 || len(tab.Data) != len(want) {
			t.Fatalf("%s: %d x %d table of %d values, want 2 x 3", tc.name, tab.Rows, tab.Cols, len(tab.Data))
		}
		for i, v := range want {
			if tab.Data[i] != v {
				t.Errorf("%s: Data[%d] = %g, want %g", tc.name, i, tab.Data[i], v)
			}
		}
	}
}

// TestReadErrors checks that each bad input gives an *Error that names the place.
func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		skip int
		want string
	}{
		{"a,b\n1,2\n", 0, `f.csv:1:1: field 1: "a" is not a number`},
		{"h\n1,2\n3,x\n", 1, `f.csv:3:3: field 2: "x" is not a number`},
		{"1,2\n3\n", 0, "f.csv:2:1: wrong number of fields"},
		{"\n\n", 0, "f.csv: no data"},
		{"1\n2\n", 5, "f.csv: no data after 2 skipped lines"},
		{"1\n", -1, "skip is -1, want >= 0"},
		{"\x1f\x8bnot gzip", 0, "f.csv: gzip: invalid header"},
		{"\"1\n", 0, `f.csv:1:4: extraneous or missing " in quoted-field`},
	} {
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path, tc.skip)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%q: error %v is not an *Error", tc.in, err)
		}
		if got := strings.Replace(err.Error(), path, "f.csv", 1); got != tc.want {
			t.Errorf("%q: error %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "missing.csv"), 0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzRead checks that no input makes Read fail other than with an *Error, and that a table it
// returns is whole.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"1,2\n3,4\n", "a\n1\n", "1,\"2\"\n", "\x1f\x8b\x08\x00", "1e40,-0,nan,inf\n", "\n\n1\n"} {
		f.Add([]byte(s), 0)
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, in []byte, skip int) {
		tab, err := Read(bytes.NewReader(in), skip%4)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			return
		}
		if tab.Rows*tab.Cols != len(tab.Data) || tab.Rows == 0 {
			t.Fatalf("%d x %d table of %d values", tab.Rows, tab.Cols, len(tab.Data))
		}
	})
}
