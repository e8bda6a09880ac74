package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Record is one line of a metrics file.
type Record struct {
	Line   int            // 1-based line number in the file of its first appearance
	Keys   []string       // keys in the order they appear
	Values map[string]any // float64 (NaN and ±Inf included), string, bool, nil, []any or map[string]any
}

// Number returns the value of key if it is a number.
func (r *Record) Number(key string) (float64, bool) {
	v, ok := r.Values[key].(float64)
	return v, ok
}

// LineError is a malformed line of a metrics file.
type LineError struct {
	Path string // file name as given to Read or Parse
	Line int    // 1-based line number
	Col  int    // 1-based byte column
	Msg  string // what is wrong
}

// Error formats the error as path:line:col: message.
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, e.Msg)
}

// parseLine parses one line: a JSON object whose values may also be NaN, Infinity
// or -Infinity. Errors are *LineError with Col set and Path, Line left empty.
func parseLine(s []byte) (Record, error) {
	p := lineParser{s: s}
	rec, err := p.object()
	if err != nil {
		return Record{}, err
	}
	return rec, nil
}

// lineParser is a small recursive-descent parser over one line.
type lineParser struct {
	s []byte // the line
	i int    // next byte
}

func (p *lineParser) errorf(format string, args ...any) error {
	return &LineError{Col: p.i + 1, Msg: fmt.Sprintf(format, args...)}
}

func (p *lineParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\r' || p.s[p.i] == '\n') {
		p.i++
	}
}

// peek describes the next byte for messages.
func (p *lineParser) peek() string {
	if p.i >= len(p.s) {
		return "end of line"
	}
	return strconv.QuoteRune(rune(p.s[p.i]))
}

// object parses a whole line: one object and nothing after it.
func (p *lineParser) object() (Record, error) {
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return Record{}, p.errorf("expected '{' to start a record, found %s", p.peek())
	}
	p.i++
	rec := Record{Values: map[string]any{}}
	p.space()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return rec, p.end()
	}
	for {
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Record{}, p.errorf("expected a quoted key, found %s", p.peek())
		}
		keyAt := p.i
		key, err := p.str()
		if err != nil {
			return Record{}, err
		}
		if _, dup := rec.Values[key]; dup {
			p.i = keyAt
			return Record{}, p.errorf("key %q appears twice", key)
		}
		p.space()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Record{}, p.errorf("expected ':' after key %q, found %s", key, p.peek())
		}
		p.i++
		p.space()
		v, err := p.value(key)
		if err != nil {
			return Record{}, err
		}
		rec.Keys = append(rec.Keys, key)
		rec.Values[key] = v
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			return rec, p.end()
		}
		return Record{}, p.errorf("expected ',' or '}' after the value of %q, found %s", key, p.peek())
	}
}

// end checks that nothing but space follows the record.
func (p *lineParser) end() error {
	p.space()
	if p.i < len(p.s) {
		return p.errorf("unexpected %s after the end of the record", p.peek())
	}
	return nil
}

// str parses a JSON string starting at the opening quote.
func (p *lineParser) str() (string, error) {
	start := p.i
	j := p.i + 1
	for j < len(p.s) && p.s[j] != '"' {
		if p.s[j] == '\\' {
			j++
		}
		j++
	}
	if j >= len(p.s) {
		return "", p.errorf("unterminated string")
	}
	raw := p.s[start+1 : j]
	if plainString(raw) {
		p.i = j + 1
		return string(raw), nil
	}
	var s string
	if err := json.Unmarshal(p.s[start:j+1], &s); err != nil {
		return "", p.errorf("bad string: %v", err)
	}
	p.i = j + 1
	return s, nil
}

// plainString reports whether b needs no decoding: no escapes, no control
// characters, valid UTF-8.
func plainString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '\\' {
			return false
		}
	}
	return utf8.Valid(b)
}

// word consumes w if it comes next.
func (p *lineParser) word(w string) bool {
	if bytes.HasPrefix(p.s[p.i:], []byte(w)) {
		p.i += len(w)
		return true
	}
	return false
}

// value parses the value of key.
func (p *lineParser) value(key string) (any, error) {
	if p.i >= len(p.s) {
		return nil, p.errorf("missing value for %q", key)
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.str()
	case c == '{' || c == '[':
		dec := json.NewDecoder(bytes.NewReader(p.s[p.i:]))
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, p.errorf("bad value for %q: %v", key, err)
		}
		p.i += int(dec.InputOffset())
		return v, nil
	case p.word("true"):
		return true, nil
	case p.word("false"):
		return false, nil
	case p.word("null"):
		return nil, nil
	case p.word("NaN"):
		return math.NaN(), nil
	case p.word("Infinity"):
		return math.Inf(1), nil
	case p.word("-Infinity"):
		return math.Inf(-1), nil
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number(key)
	}
	return nil, p.errorf("bad value for %q: unexpected %s", key, p.peek())
}

// number parses a JSON number, checking the grammar strictly.
func (p *lineParser) number(key string) (float64, error) {
	start := p.i
	digits := func() int {
		n := 0
		for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	bad := func() (float64, error) {
		p.i = start
		return 0, p.errorf("bad number for %q", key)
	}
	if p.s[p.i] == '-' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return bad()
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if digits() == 0 {
			return bad()
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return bad()
		}
	}
	// Out-of-range values become ±Inf, as in Python; ParseFloat reports that as an
	// error we accept.
	v, err := strconv.ParseFloat(string(p.s[start:p.i]), 64)
	if err != nil && !math.IsInf(v, 0) {
		return bad()
	}
	return v, nil
}
