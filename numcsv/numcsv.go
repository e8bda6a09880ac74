package numcsv

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/anestar/anestar/internal/safefile"
)

// Table is a table of numbers.
type Table struct {
	Data       []float32 // the values, row after row (Data[i*Cols+j] is row i, column j)
	Rows, Cols int       // the table's size
}

// Error is a problem with a file's contents or with reading it.
type Error struct {
	Path string // the file, as given to ReadFile; "" from Read
	Line int    // 1-based line in the (decompressed) text, 0 where no line applies
	Col  int    // 1-based column, with Line
	Err  error  // what is wrong
}

// Error formats the error as path:line:col: message, leaving out what is unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// MaxBytes bounds the text of a gzip-compressed file (1 GiB, ample for data sets read whole).
const MaxBytes = 1 << 30

// gzipMagic starts every gzip stream; Read decompresses input that begins with it.
var gzipMagic = []byte{0x1f, 0x8b}

// ReadFile reads the table in the file at path (see Read); errors about its contents name the path.
func ReadFile(path string, skip int) (*Table, error) {
	if skip < 0 {
		return nil, errSkip(skip)
	}
	f, _, err := safefile.Open(path) // a regular file, opened without blocking on a FIFO
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f, skip)
	if e, ok := err.(*Error); ok {
		e.Path = path
	}
	return t, err
}

func errSkip(skip int) error { return &Error{Err: fmt.Errorf("skip is %d, want >= 0", skip)} }

// Read reads rows of comma-separated numbers from r, gzip-compressed or not, skipping the first skip
// lines and empty lines. A table without values is an error.
func Read(r io.Reader, skip int) (*Table, error) {
	if skip < 0 {
		return nil, errSkip(skip)
	}
	br := bufio.NewReader(r)
	if head, _ := br.Peek(len(gzipMagic)); bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{Err: err}
		}
		defer zr.Close()
		// No header bounds a decompressed stream: a small file must not expand without limit.
		br = bufio.NewReader(safefile.LimitReader(zr, MaxBytes, "decompressed CSV"))
	}
	for line := 0; line < skip; line++ {
		if _, err := br.ReadString('\n'); err != nil {
			if err == io.EOF {
				return nil, &Error{Err: fmt.Errorf("no data after %d skipped lines", line)}
			}
			return nil, &Error{Err: err}
		}
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = 0 // every record as long as the first
	t := &Table{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, &Error{Line: pe.Line + skip, Col: pe.Column, Err: pe.Err}
			}
			return nil, &Error{Err: err}
		}
		t.Cols = len(rec)
		for i, field := range rec {
			v, err := strconv.ParseFloat(strings.TrimSpace(field), 32)
			if err != nil {
				l, c := cr.FieldPos(i)
				return nil, &Error{Line: l + skip, Col: c, Err: fmt.Errorf("field %d: %q is not a number", i+1, field)}
			}
			t.Data = append(t.Data, float32(v))
		}
		t.Rows++
	}
	if len(t.Data) == 0 {
		return nil, &Error{Err: errors.New("no data")}
	}
	return t, nil
}
