package metrics

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"sync"
)

// Writer appends records to a metrics file, one JSON object per line.
// It is safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	f       *os.File // nil once closed
	path    string   // for error messages
	dropped int64    // bytes of an incomplete last line removed by Open
	buf     []byte   // the line being built, reused
}

// Open opens path for writing records. With appendMode the records go after those
// already in the file (a run resuming from a checkpoint); otherwise the file is
// created or emptied.
//
// In append mode an existing last line without a newline is repaired first: if it
// holds a whole record, a newline is added; otherwise it is the remains of a write
// cut short by a crash and is removed, so that the next record starts a line of its
// own. [Writer.Dropped] reports how many bytes were removed.
func Open(path string, appendMode bool) (*Writer, error) {
	// O_APPEND in both modes: each line goes to the end in one write, so two writers can
	// never tear each other's lines.
	flag := os.O_RDWR | os.O_CREATE | os.O_TRUNC | os.O_APPEND
	if appendMode {
		flag = os.O_RDWR | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	w := &Writer{f: f, path: path}
	if appendMode {
		if err := w.repairTail(); err != nil {
			f.Close()
			return nil, fmt.Errorf("metrics: %s: %w", path, err)
		}
	}
	return w, nil
}

// repairTail makes the file end in a newline (see Open).
func (w *Writer) repairTail() error {
	st, err := w.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size == 0 {
		return nil
	}
	// Find the start of the last line by reading backwards in chunks.
	start := int64(0)
	chunk := make([]byte, 4096)
	for end := size; end > 0; {
		n := int64(len(chunk))
		if end < n {
			n = end
		}
		if _, err := w.f.ReadAt(chunk[:n], end-n); err != nil && err != io.EOF {
			return err
		}
		if i := bytes.LastIndexByte(chunk[:n], '\n'); i >= 0 {
			if end-n+int64(i) == size-1 {
				return nil // already ends in a newline
			}
			start = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	tail := make([]byte, size-start)
	if _, err := w.f.ReadAt(tail, start); err != nil && err != io.EOF {
		return err
	}
	if _, err := parseLine(tail); err == nil || len(bytes.TrimSpace(tail)) == 0 {
		_, err := w.f.Write([]byte{'\n'})
		return err
	}
	if err := w.f.Truncate(start); err != nil {
		return err
	}
	w.dropped = size - start
	return nil
}

// DropFrom removes the records whose key is a number at least from, and every line after the
// first of them: the steps a killed run logged after its last checkpoint, which the resumed run
// logs again. It returns the number of lines removed.
func (w *Writer) DropFrom(key string, from int64) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, fmt.Errorf("metrics: %s: drop after close", w.path)
	}
	if _, err := w.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("metrics: %s: %w", w.path, err)
	}
	br := bufio.NewReader(w.f)
	var off int64
	cut := int64(-1)
	dropped := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if cut < 0 {
				if rec, perr := parseLine(line); perr == nil {
					if v, ok := rec.Number(key); ok && v >= float64(from) {
						cut = off
					}
				}
			}
			if cut >= 0 {
				dropped++
			}
			off += int64(len(line))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("metrics: %s: %w", w.path, err)
		}
	}
	if cut < 0 {
		return 0, nil
	}
	if err := w.f.Truncate(cut); err != nil {
		return 0, fmt.Errorf("metrics: %s: %w", w.path, err)
	}
	return dropped, nil
}

// Dropped returns the number of bytes of an incomplete last line that Open removed.
func (w *Writer) Dropped() int64 { return w.dropped }

// Path returns the path the writer was opened with.
func (w *Writer) Path() string { return w.path }

// Write appends one record as a line. Keys come in a fixed order: "step", then
// "epoch", then the rest sorted. Values may be numbers of any Go numeric type, bools,
// strings, nil, or anything encoding/json can marshal. The line reaches the
// operating system in a single write before Write returns.
func (w *Writer) Write(fields map[string]any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("metrics: %s: write after close", w.path)
	}
	line, err := appendRecord(w.buf[:0], fields)
	w.buf = line
	if err != nil {
		return fmt.Errorf("metrics: %s: %w", w.path, err)
	}
	if _, err := w.f.Write(line); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// Close closes the file. Closing twice is not an error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

// KeyOrder returns the keys of fields in the order Write puts them: "step", then
// "epoch", then the others sorted.
func KeyOrder(fields map[string]any) []string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "step" && k != "epoch" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var head []string
	for _, k := range []string{"step", "epoch"} {
		if _, ok := fields[k]; ok {
			head = append(head, k)
		}
	}
	return append(head, keys...)
}

// NonFiniteKey is the key that lists, in a record, the keys whose values were NaN or infinite: strict
// JSON has no spelling for them, so the record holds null there.
const NonFiniteKey = "nonfinite"

// nonFinite returns the keys of fields whose values are non-finite floats, sorted.
func nonFinite(fields map[string]any) []string {
	var keys []string
	for k, v := range fields {
		var f float64
		switch v := v.(type) {
		case float64:
			f = v
		case float32:
			f = float64(v)
		default:
			continue
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// appendRecord appends fields as one JSON line, newline included: valid JSON, a non-finite number
// written as null and its key listed under NonFiniteKey.
func appendRecord(b []byte, fields map[string]any) ([]byte, error) {
	if bad := nonFinite(fields); len(bad) > 0 {
		if _, taken := fields[NonFiniteKey]; taken {
			return b, fmt.Errorf("key %q is reserved for the keys of non-finite values (%v)", NonFiniteKey, bad)
		}
		fixed := make(map[string]any, len(fields)+1)
		for k, v := range fields {
			fixed[k] = v
		}
		for _, k := range bad {
			fixed[k] = nil
		}
		fixed[NonFiniteKey] = bad
		fields = fixed
	}
	b = append(b, '{')
	for i, k := range KeyOrder(fields) {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendString(b, k); err != nil {
			return b, err
		}
		b = append(b, ':')
		if b, err = appendValue(b, fields[k]); err != nil {
			return b, fmt.Errorf("key %q: %w", k, err)
		}
	}
	return append(b, '}', '\n'), nil
}

// appendString appends s as a JSON string without HTML escaping.
func appendString(b []byte, s string) ([]byte, error) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(sb.Bytes(), []byte{'\n'})...), nil
}

// appendValue appends one value. Floats use the shortest form that reads back
// exactly; non-finite floats (which appendRecord has made null at the top level)
// use Python's spelling.
func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendString(b, v)
	case float64:
		return appendFloat(b, v, 64), nil
	case float32:
		return appendFloat(b, float64(v), 32), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int8:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case uint:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), nil
	case uint64:
		return strconv.AppendUint(b, v, 10), nil
	}
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		var ue *json.UnsupportedValueError
		if errors.As(err, &ue) {
			return b, fmt.Errorf("cannot encode %v", ue.Str)
		}
		return b, err
	}
	return append(b, bytes.TrimSuffix(sb.Bytes(), []byte{'\n'})...), nil
}

// appendFloat appends v in the shortest form that reads back as the same
// float of the given bit size.
func appendFloat(b []byte, v float64, bits int) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "Infinity"...)
	case math.IsInf(v, -1):
		return append(b, "-Infinity"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, bits)
}
