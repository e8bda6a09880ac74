package mil

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// wrap puts one op line into a program whose op lines start on line 3.
func wrap(op string) string {
	return "program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 4, 1, 2]> x) {\n" + op + "\n    } -> (x);\n}\n"
}

// TestParseErrors checks the position and the message of each kind of syntax error: the chunks of
// testdata/errors/parse.mil, and two sources a text file cannot hold well.
func TestParseErrors(t *testing.T) {
	tests := readChunks(t, "testdata/errors/parse.mil")
	tests = append(tests,
		chunk{name: "empty source", src: "", want: `1:1: expected "program" at the start of a MIL program, found end of file`},
		chunk{name: "control byte", src: wrap("        fp16 y = const()[val=fp16(1.0)] \x01;"), want: `4:41: unexpected byte 0x01`},
		chunk{name: "fp16 overflow", src: wrap("        fp16 y = const()[val=fp16(1e10)];"), want: `4:35: fp16 literal 1e10 is beyond fp16's largest finite value 65504: it would be inf (write inf if that is meant)`},
		chunk{name: "fp16 overflow in a tensor", src: wrap("        tensor<fp16, [2]> y = const()[val=tensor<fp16, [2]>([1.0, -65520])];"), want: `4:67: fp16 literal -65520 is beyond fp16's largest finite value 65504: it would be inf (write inf if that is meant)`})
	for _, ok := range []string{"fp16(65504)", "fp16(-65519)", "fp16(inf)", "fp16(-inf)"} {
		if _, err := Parse("t.mil", []byte(wrap("        fp16 y = const()[val="+ok+"];"))); err != nil && strings.Contains(err.Error(), "beyond fp16") {
			t.Errorf("%s refused: %v", ok, err) // the largest finite fp16, what rounds to it, and inf itself are fine
		}
	}
	for _, tc := range tests {
		p, err := Parse("t.mil", []byte(tc.src))
		if err == nil {
			t.Errorf("%s: Parse succeeded, want error %q", tc.name, tc.want)
			continue
		}
		if p != nil {
			t.Errorf("%s: Parse returned a program with its error", tc.name)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.File != "t.mil" || !se.Pos.IsValid() {
			t.Errorf("%s: error %#v is not a *SyntaxError with a position", tc.name, err)
		}
		if got := strings.TrimPrefix(err.Error(), "t.mil:"); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// chunk is one test case of a chunked testdata file.
type chunk struct {
	name string // file:line of the chunk's first line
	src  string // the chunk, its expectation line included
	want string // the expectations: what follows "// ### " on the chunk's first lines, one a line
}

// readChunks splits a testdata file into its chunks, in the style of go.starlark.net's chunked files:
// chunks are separated by lines of "---", and the first lines of each, "// ### EXPECTATION", say what
// it must give; text before the first separator is the file's own comment.
func readChunks(t *testing.T, path string) []chunk {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []chunk
	lines := strings.SplitAfter(string(data), "\n")
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		c := chunk{name: fmt.Sprintf("%s:%d", path, start+1), src: strings.Join(lines[start:end], "")}
		var want []string
		for _, l := range lines[start:end] {
			w, ok := strings.CutPrefix(strings.TrimRight(l, "\n"), "// ### ")
			if !ok {
				break
			}
			want = append(want, w)
		}
		if len(want) == 0 {
			t.Fatalf("%s: chunk does not start with a \"// ### \" expectation", c.name)
		}
		c.want = strings.Join(want, "\n")
		out = append(out, c)
	}
	for i, l := range lines {
		if strings.TrimRight(l, "\n") == "---" {
			flush(i)
			start = i + 1
		}
	}
	flush(len(lines))
	if len(out) == 0 {
		t.Fatalf("%s: no chunks", path)
	}
	return out
}

func TestSyntaxErrorWithoutFile(t *testing.T) {
	_, err := Parse("", []byte("program("))
	if want := `1:9: expected program version such as 1.3, found end of file`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
