package npy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/anestar/anestar/half"
)

// DType is the element type a .npy file stores.
type DType uint8

// The element types.
const (
	F32 DType = iota // '<f4'
	F16              // '<f2'
	F64              // '<f8' (read only; Write stores it as F32)
)

// String returns the numpy descr of d.
func (d DType) String() string {
	switch d {
	case F16:
		return "<f2"
	case F64:
		return "<f8"
	}
	return "<f4"
}

// Array is an n-dimensional array in C (row-major) order.
type Array struct {
	Shape []int     // dims, outermost first; empty for a 0-d array
	DType DType     // what the file stores (or will store)
	Data  []float32 // the values, len(Data) == product of Shape
}

// Len is the number of elements the shape holds.
func (a *Array) Len() int {
	n := 1
	for _, d := range a.Shape {
		n *= d
	}
	return n
}

const magic = "\x93NUMPY"

// maxElems bounds the element count a header may declare, so that a corrupt file cannot demand a huge
// allocation before its data is found missing.
const maxElems = 1 << 31

// Read decodes one .npy array from r.
func Read(r io.Reader) (*Array, error) { return read(r, -1) }

// read is Read of a stream of size bytes (-1 when unknown), which it checks against the header's
// claim before reading the data.
func read(r io.Reader, size int64) (*Array, error) {
	br := bufio.NewReader(r)
	var pre [8]byte
	if _, err := io.ReadFull(br, pre[:]); err != nil {
		return nil, fmt.Errorf("npy: reading magic: %w", err)
	}
	if string(pre[:6]) != magic {
		return nil, fmt.Errorf("npy: offset 0: not a .npy file (bad magic %q)", pre[:6])
	}
	var hlen int
	var off int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: offset 8: reading header length: %w", err)
		}
		hlen, off = int(binary.LittleEndian.Uint16(b[:])), 10
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, fmt.Errorf("npy: offset 8: reading header length: %w", err)
		}
		hlen, off = int(binary.LittleEndian.Uint32(b[:])), 12
		if hlen > 1<<20 {
			return nil, fmt.Errorf("npy: offset 8: header length %d is too large", hlen)
		}
	default:
		return nil, fmt.Errorf("npy: offset 6: unsupported format version %d.%d", pre[6], pre[7])
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return nil, fmt.Errorf("npy: offset %d: reading %d-byte header: %w", off, hlen, err)
	}
	a, err := parseHeader(string(hdr))
	if err != nil {
		return nil, fmt.Errorf("npy: offset %d: header: %w", off, err)
	}
	off += hlen
	n := a.Len()
	elem := 4
	switch a.DType {
	case F16:
		elem = 2
	case F64:
		elem = 8
	}
	if size >= 0 && size != int64(off)+int64(n*elem) {
		return nil, fmt.Errorf("npy: offset %d: the file has %d bytes of data, shape %v of %s needs %d", off, size-int64(off), a.Shape, a.DType, n*elem)
	}
	// Grow the buffer as data arrives, so that a header promising more than the file holds costs nothing.
	var data bytes.Buffer
	if got, err := io.CopyN(&data, br, int64(n*elem)); err != nil {
		return nil, fmt.Errorf("npy: offset %d: data holds %d bytes, shape %v needs %d", off, got, a.Shape, n*elem)
	}
	if extra, _ := io.Copy(io.Discard, io.LimitReader(br, 1<<20)); extra > 0 {
		return nil, fmt.Errorf("npy: offset %d: bytes follow the data of shape %v: not one array", off+n*elem, a.Shape)
	}
	raw := data.Bytes()
	a.Data = make([]float32, n)
	switch a.DType {
	case F16:
		half.DecodeF16(a.Data, raw)
	case F32:
		for i := range a.Data {
			a.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case F64:
		for i := range a.Data {
			a.Data[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	}
	return a, nil
}

// parseHeader reads the Python dict literal of a .npy header:
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
func parseHeader(h string) (*Array, error) {
	h = strings.TrimSpace(h)
	if !strings.HasPrefix(h, "{") || !strings.HasSuffix(h, "}") {
		return nil, fmt.Errorf("not a dict: %q", h)
	}
	body := h[1 : len(h)-1]
	a := &Array{}
	seen := map[string]bool{}
	for body = strings.TrimSpace(body); body != ""; body = strings.TrimSpace(body) {
		key, rest, err := quoted(body)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("key %q is given twice", key)
		}
		rest = strings.TrimSpace(rest)
		if !strings.HasPrefix(rest, ":") {
			return nil, fmt.Errorf("missing ':' after key %q", key)
		}
		rest = strings.TrimSpace(rest[1:])
		switch key {
		case "descr":
			var d string
			if d, rest, err = quoted(rest); err != nil {
				return nil, err
			}
			switch d {
			case "<f4", "f4", "=f4":
				a.DType = F32
			case "<f2", "f2", "=f2":
				a.DType = F16
			case "<f8", "f8", "=f8":
				a.DType = F64
			case ">f2", ">f4", ">f8":
				return nil, fmt.Errorf("dtype %q is big-endian; want little-endian '<f2', '<f4' or '<f8' (numpy: a.astype('<f4'))", d)
			default:
				return nil, fmt.Errorf("dtype %q is not supported (want '<f2', '<f4' or '<f8')", d)
			}
		case "fortran_order":
			switch {
			case strings.HasPrefix(rest, "False"):
				rest = rest[5:]
			case strings.HasPrefix(rest, "True"):
				return nil, fmt.Errorf("fortran_order arrays are not supported")
			default:
				return nil, fmt.Errorf("fortran_order is not True or False")
			}
		case "shape":
			if !strings.HasPrefix(rest, "(") {
				return nil, fmt.Errorf("shape is not a tuple")
			}
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return nil, fmt.Errorf("shape tuple is not closed")
			}
			a.Shape = []int{}
			total := 1
			for _, f := range strings.Split(rest[1:end], ",") {
				f = strings.TrimSpace(f)
				if f == "" {
					continue
				}
				d, err := strconv.Atoi(strings.TrimSuffix(f, "L"))
				if err != nil || d < 0 {
					return nil, fmt.Errorf("shape dim %q is not a non-negative integer", f)
				}
				if d > 0 && total > maxElems/d {
					return nil, fmt.Errorf("shape %s holds more than %d elements", rest[:end+1], maxElems)
				}
				total *= d
				a.Shape = append(a.Shape, d)
			}
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("unknown key %q", key)
		}
		seen[key] = true
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, ",") {
			rest = rest[1:]
		} else if rest != "" {
			return nil, fmt.Errorf("unexpected %q after %q", rest, key)
		}
		body = rest
	}
	for _, k := range []string{"descr", "fortran_order", "shape"} {
		if !seen[k] {
			return nil, fmt.Errorf("missing key %q", k)
		}
	}
	return a, nil
}

// quoted splits a leading Python string literal ('x' or "x") off s.
func quoted(s string) (string, string, error) {
	if s == "" || (s[0] != '\'' && s[0] != '"') {
		return "", "", fmt.Errorf("expected a quoted string at %q", s)
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", "", fmt.Errorf("unterminated string at %q", s)
	}
	return s[1 : 1+end], s[end+2:], nil
}

// Write encodes a as a .npy file. F64 arrays are written as '<f4'.
func Write(w io.Writer, a *Array) error {
	if len(a.Data) != a.Len() {
		return fmt.Errorf("npy: shape %v holds %d values, data has %d", a.Shape, a.Len(), len(a.Data))
	}
	dt := a.DType
	if dt == F64 {
		dt = F32
	}
	var shape strings.Builder
	shape.WriteByte('(')
	for i, d := range a.Shape {
		if d < 0 {
			return fmt.Errorf("npy: negative dim %d in shape %v", d, a.Shape)
		}
		if i > 0 {
			shape.WriteString(", ")
		}
		shape.WriteString(strconv.Itoa(d))
	}
	if len(a.Shape) == 1 {
		shape.WriteByte(',')
	}
	shape.WriteByte(')')
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", dt, shape.String())
	var buf bytes.Buffer
	buf.WriteString(magic)
	// Pad the header with spaces and a newline so that the data starts 64-byte aligned.
	if pre := 10; (pre+len(dict)+1+63)/64*64-pre < 1<<16 {
		total := (pre + len(dict) + 1 + 63) / 64 * 64
		buf.Write([]byte{1, 0})
		binary.Write(&buf, binary.LittleEndian, uint16(total-pre))
		buf.WriteString(dict)
		buf.WriteString(strings.Repeat(" ", total-pre-len(dict)-1))
	} else {
		total := (12 + len(dict) + 1 + 63) / 64 * 64
		buf.Write([]byte{2, 0})
		binary.Write(&buf, binary.LittleEndian, uint32(total-12))
		buf.WriteString(dict)
		buf.WriteString(strings.Repeat(" ", total-12-len(dict)-1))
	}
	buf.WriteByte('\n')
	if dt == F16 {
		raw := make([]byte, 2*len(a.Data))
		half.EncodeF16(raw, a.Data)
		buf.Write(raw)
	} else {
		raw := make([]byte, 4*len(a.Data))
		for i, v := range a.Data {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
		}
		buf.Write(raw)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ReadFile reads the .npy file at path.
// Only a regular file is read, and its size must be what the header says.
func ReadFile(path string) (*Array, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a, err := read(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return a, nil
}

// WriteFile writes a to path as a .npy file.
func WriteFile(path string, a *Array) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, a); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
