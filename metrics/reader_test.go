package metrics

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parseString(t *testing.T, text string) *Series {
	t.Helper()
	s, err := Parse(strings.NewReader(text), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseValues(t *testing.T) {
	s := parseString(t, " { \"step\" : 3 , \"loss\":-2.5e-3,\"a\":NaN, \"b\":Infinity,\"c\":-Infinity,"+
		"\"s\":\"\\u00e9\\n\",\"t\":true,\"f\":false,\"n\":null,\"big\":1e400,\"arr\":[1,{\"x\":2}],\"o\":{}}\t\r\n")
	if len(s.Records) != 1 {
		t.Fatalf("%d records", len(s.Records))
	}
	r := s.Records[0]
	if want := []string{"step", "loss", "a", "b", "c", "s", "t", "f", "n", "big", "arr", "o"}; !reflect.DeepEqual(r.Keys, want) {
		t.Errorf("keys %v, want %v", r.Keys, want)
	}
	if v, _ := r.Number("step"); v != 3 {
		t.Errorf("step = %v", v)
	}
	if v, _ := r.Number("loss"); v != -0.0025 {
		t.Errorf("loss = %v", v)
	}
	if v, _ := r.Number("a"); !math.IsNaN(v) {
		t.Errorf("a = %v, want NaN", v)
	}
	if v, _ := r.Number("b"); !math.IsInf(v, 1) {
		t.Errorf("b = %v, want +Inf", v)
	}
	if v, _ := r.Number("c"); !math.IsInf(v, -1) {
		t.Errorf("c = %v, want -Inf", v)
	}
	if v, _ := r.Number("big"); !math.IsInf(v, 1) {
		t.Errorf("big = %v, want +Inf", v)
	}
	if r.Values["s"] != "é\n" || r.Values["t"] != true || r.Values["f"] != false || r.Values["n"] != nil {
		t.Errorf("s, t, f, n = %q %v %v %v", r.Values["s"], r.Values["t"], r.Values["f"], r.Values["n"])
	}
	if want := []any{1.0, map[string]any{"x": 2.0}}; !reflect.DeepEqual(r.Values["arr"], want) {
		t.Errorf("arr = %#v", r.Values["arr"])
	}
	if _, ok := r.Number("s"); ok {
		t.Error("Number of a string reported ok")
	}
}

func TestParseMalformed(t *testing.T) {
	cases := []struct{ line, want string }{
		{`[1,2]`, `run.jsonl:2:1: expected '{' to start a record, found '['`},
		{`step: 1`, `run.jsonl:2:1: expected '{' to start a record, found 's'`},
		{`{"step": 1`, `run.jsonl:2:11: expected ',' or '}' after the value of "step", found end of line`},
		{`{"step": 1,}`, `run.jsonl:2:12: expected a quoted key, found '}'`},
		{`{step: 1}`, `run.jsonl:2:2: expected a quoted key, found 's'`},
		{`{"step" 1}`, `run.jsonl:2:9: expected ':' after key "step", found '1'`},
		{`{"step":}`, `run.jsonl:2:9: bad value for "step": unexpected '}'`},
		{`{"step":1} x`, `run.jsonl:2:12: unexpected 'x' after the end of the record`},
		{`{"step":1}{"step":2}`, `run.jsonl:2:11: unexpected '{' after the end of the record`},
		{`{"step":1,"step":2}`, `run.jsonl:2:11: key "step" appears twice`},
		{`{"loss":01}`, `run.jsonl:2:10: expected ',' or '}' after the value of "loss", found '1'`},
		{`{"loss":1.}`, `run.jsonl:2:9: bad number for "loss"`},
		{`{"loss":-}`, `run.jsonl:2:9: bad number for "loss"`},
		{`{"loss":1e}`, `run.jsonl:2:9: bad number for "loss"`},
		{`{"loss":.5}`, `run.jsonl:2:9: bad value for "loss": unexpected '.'`},
		{`{"loss":nan}`, `run.jsonl:2:9: bad value for "loss": unexpected 'n'`},
		{`{"loss":inf}`, `run.jsonl:2:9: bad value for "loss": unexpected 'i'`},
		{`{"loss":'x'}`, `run.jsonl:2:9: bad value for "loss": unexpected '\''`},
		{`{"note":"abc}`, `run.jsonl:2:9: unterminated string`},
		{`{"v":[1,2}`, `run.jsonl:2:6: bad value for "v": invalid character '}' after array element`},
		{"{\"k\":\"a\tb\"}", `run.jsonl:2:6: bad string: invalid character '\t' in string literal`},
	}
	for _, c := range cases {
		text := "{\"step\":0}\n" + c.line + "\n{\"step\":5}\n"
		_, err := Parse(strings.NewReader(text), "run.jsonl")
		if err == nil {
			t.Errorf("%s: no error", c.line)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.line, err, c.want)
		}
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || le.Path != "run.jsonl" {
			t.Errorf("%s: error %#v is not a *LineError for line 2", c.line, err)
		}
	}
}

func TestParseReportsEveryBadLine(t *testing.T) {
	var b strings.Builder
	var want []string
	for i := 1; i <= 15; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&b, "{\"step\":%d,}\n", i)
			if len(want) < maxReported {
				want = append(want, fmt.Sprintf("f:%d:", i))
			}
		} else {
			fmt.Fprintf(&b, "{\"step\":%d}\n", i)
		}
	}
	_, err := Parse(strings.NewReader(b.String()), "f")
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 5 {
		t.Fatalf("error has %d lines, want 5:\n%s", len(lines), err)
	}
	for i, p := range []string{"f:3:", "f:6:", "f:9:", "f:12:", "f:15:"} {
		if !strings.HasPrefix(lines[i], p) {
			t.Errorf("error line %d = %q, want prefix %q", i, lines[i], p)
		}
	}

	b.Reset()
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&b, "oops %d\n", i)
	}
	_, err = Parse(strings.NewReader(b.String()), "f")
	lines = strings.Split(err.Error(), "\n")
	if len(lines) != maxReported+1 || !strings.HasPrefix(lines[9], "f:10:1:") || lines[10] != "f: 15 more malformed lines" {
		t.Errorf("25 bad lines reported as:\n%s", err)
	}
}

func TestParseBlankAndTruncated(t *testing.T) {
	s := parseString(t, "\n{\"step\":1}\r\n   \n{\"step\":2}\n{\"step\":3,\"lo")
	if got := s.Column("step"); !reflect.DeepEqual(got, []float64{1, 2}) {
		t.Errorf("steps %v", got)
	}
	if s.Records[0].Line != 2 || s.Records[1].Line != 4 {
		t.Errorf("lines %d %d, want 2 4", s.Records[0].Line, s.Records[1].Line)
	}
	if s.Truncated != 5 {
		t.Errorf("Truncated = %d, want 5", s.Truncated)
	}
	// A whole last record without a newline is kept.
	s = parseString(t, "{\"step\":1}\n{\"step\":2}")
	if len(s.Records) != 2 || s.Truncated != 0 {
		t.Errorf("%d records, truncated %d", len(s.Records), s.Truncated)
	}
	// A malformed line that ends in a newline is an error even when last.
	if _, err := Parse(strings.NewReader("{\"step\":1}\n{\"step\":2,\n"), "f"); err == nil {
		t.Error("malformed last line with newline: no error")
	}
	s = parseString(t, "")
	if len(s.Records) != 0 || s.Truncated != 0 {
		t.Errorf("empty input: %+v", s)
	}
}

func TestParseDuplicateSteps(t *testing.T) {
	// A run that logged steps 1..4, crashed and resumed from the checkpoint of
	// step 2, then ran to step 5. An evaluation line adds keys to step 4.
	text := `{"step":1,"loss":1.0,"ms":10}
{"step":2,"loss":0.9,"ms":10}
{"step":3,"loss":0.8,"ms":10}
{"step":4,"loss":0.7,"ms":10}
{"step":3,"loss":0.81,"ms":50}
{"step":4,"loss":0.71,"ms":11}
{"step":4,"epoch":1,"test_acc":0.5}
{"step":5,"loss":0.6,"ms":11}
{"epoch":1,"summary":1}
{"epoch":1,"summary":2}
{"note":"no step"}
{"note":"no step"}
`
	s := parseString(t, text)
	if s.Superseded != 3 {
		t.Errorf("Superseded = %d, want 3", s.Superseded)
	}
	xs, ys := s.Pairs("step", "loss")
	if !reflect.DeepEqual(xs, []float64{1, 2, 3, 4, 5}) || !reflect.DeepEqual(ys, []float64{1.0, 0.9, 0.81, 0.71, 0.6}) {
		t.Errorf("step/loss pairs %v %v", xs, ys)
	}
	if got := s.Column("ms"); !reflect.DeepEqual(got, []float64{10, 10, 50, 11, 11}) {
		t.Errorf("ms column %v", got)
	}
	r := s.Records[3]
	if r.Line != 4 || !reflect.DeepEqual(r.Keys, []string{"step", "loss", "ms", "epoch", "test_acc"}) {
		t.Errorf("merged step 4: line %d keys %v", r.Line, r.Keys)
	}
	if len(s.Records) != 8 || s.Records[5].Values["summary"] != 2.0 {
		t.Errorf("%d records; epoch-only record %v", len(s.Records), s.Records[5].Values)
	}
	xs, ys = s.Pairs("", "summary")
	if !reflect.DeepEqual(xs, []float64{9}) || !reflect.DeepEqual(ys, []float64{2}) {
		t.Errorf("line/summary pairs %v %v", xs, ys)
	}
	if got, want := s.Keys(), []string{"step", "epoch", "loss", "ms", "note", "summary", "test_acc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Keys() = %v, want %v", got, want)
	}
	if got, want := s.NumericKeys(), []string{"step", "epoch", "loss", "ms", "summary", "test_acc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("NumericKeys() = %v, want %v", got, want)
	}
	if !s.Has("note") || s.Has("nope") {
		t.Error("Has")
	}
}

func TestReadMissing(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "none.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "none.jsonl") {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, "{\"step\":%d,\"compiles\":11,\"loss\":%g,\"ms\":231.5}\n", i, 1/float64(i+1))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(strings.NewReader(text), "b"); err != nil {
			b.Fatal(err)
		}
	}
}
