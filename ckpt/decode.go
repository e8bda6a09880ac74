package ckpt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxHeader is the largest JSON header accepted, in bytes (the reference implementation's bound).
const MaxHeader = 100_000_000

// Decode parses and validates a whole safetensors file held in data. The returned tensors' Data
// slices alias data (capacity-limited, so appending to one cannot overwrite another). Any defect
// is reported as a *FormatError naming the byte offset and, where it applies, the tensor.
func Decode(data []byte) (*File, error) {
	if len(data) < 8 {
		return nil, &FormatError{Offset: int64(len(data)), Msg: fmt.Sprintf("file of %d bytes is too short for the 8-byte header length", len(data))}
	}
	n := binary.LittleEndian.Uint64(data)
	if n > uint64(len(data)-8) && len(data) > 8 && !strings.ContainsRune("{ \t\r\n", rune(data[8])) {
		// An impossible header length and no JSON object where the header would start: some other file.
		return nil, &FormatError{Offset: 8, Msg: fmt.Sprintf("not a safetensors file (no JSON header: %q where '{' starts it)", data[8])}
	}
	if n > MaxHeader {
		return nil, &FormatError{Msg: fmt.Sprintf("header length %d exceeds the limit of %d bytes", n, MaxHeader)}
	}
	if n > uint64(len(data)-8) {
		return nil, &FormatError{Msg: fmt.Sprintf("header length %d runs past the end of the %d-byte file", n, len(data))}
	}
	hdr := data[8 : 8+n]
	area := data[8+n:]
	areaBase := int64(8 + n)

	p := &headerParser{hdr: hdr, dec: json.NewDecoder(bytes.NewReader(hdr))}
	p.dec.UseNumber()
	f, infos, err := p.parse()
	if err != nil {
		return nil, err
	}

	// The data area must be covered exactly, in order, without gaps or overlaps.
	sort.SliceStable(infos, func(i, j int) bool {
		if infos[i].begin != infos[j].begin {
			return infos[i].begin < infos[j].begin
		}
		return infos[i].end < infos[j].end
	})
	pos := uint64(0)
	for _, in := range infos {
		switch {
		case in.begin != pos && in.begin < pos:
			return nil, &FormatError{Offset: in.at, Tensor: in.name, Msg: fmt.Sprintf("data_offsets [%d,%d] overlap the previous tensor, which ends at %d", in.begin, in.end, pos)}
		case in.begin != pos:
			return nil, &FormatError{Offset: in.at, Tensor: in.name, Msg: fmt.Sprintf("data_offsets [%d,%d] leave a gap after offset %d", in.begin, in.end, pos)}
		case in.end > uint64(len(area)):
			return nil, &FormatError{Offset: in.at, Tensor: in.name, Msg: fmt.Sprintf("data_offsets [%d,%d] run past the data area of %d bytes (file truncated?)", in.begin, in.end, len(area))}
		}
		pos = in.end
		t := f.Tensors[in.name]
		t.Data = area[in.begin:in.end:in.end]
		f.Tensors[in.name] = t
	}
	if pos != uint64(len(area)) {
		return nil, &FormatError{Offset: areaBase + int64(pos), Msg: fmt.Sprintf("data area has %d bytes but the tensors cover %d", len(area), pos)}
	}
	if err := verifyChecksums(f, 8); err != nil {
		return nil, err
	}
	return f, nil
}

// info is one parsed tensor entry of the header.
type info struct {
	name       string
	at         int64 // file offset of the entry's name
	begin, end uint64
}

// headerParser reads the JSON header token by token, which lets it reject duplicate names
// and report file offsets.
type headerParser struct {
	hdr []byte
	dec *json.Decoder
}

// off returns the file offset just after the last token read.
func (p *headerParser) off() int64 { return 8 + p.dec.InputOffset() }

// errorf returns a FormatError at the current position.
func (p *headerParser) errorf(tensor, format string, args ...any) error {
	return &FormatError{Offset: p.off(), Tensor: tensor, Msg: fmt.Sprintf(format, args...)}
}

// token reads the next JSON token, turning syntax errors into FormatErrors.
func (p *headerParser) token(tensor string) (json.Token, error) {
	tok, err := p.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return nil, &FormatError{Offset: 8 + se.Offset, Tensor: tensor, Msg: "header JSON: " + se.Error()}
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return nil, &FormatError{Offset: 8 + int64(len(p.hdr)), Tensor: tensor, Msg: "header JSON ends early"}
		}
		return nil, &FormatError{Offset: p.off(), Tensor: tensor, Msg: "header JSON: " + err.Error()}
	}
	return tok, nil
}

// delim reads a token that must be the delimiter d.
func (p *headerParser) delim(tensor string, d json.Delim, what string) error {
	tok, err := p.token(tensor)
	if err != nil {
		return err
	}
	if tok != d {
		return p.errorf(tensor, "%s: want %q, got %s", what, string(d), describe(tok))
	}
	return nil
}

// describe names a JSON token for error messages.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("string %q", v)
	case json.Number:
		return "number " + string(v)
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// parse reads the whole header: an object of tensor entries and an optional __metadata__.
func (p *headerParser) parse() (*File, []info, error) {
	if !utf8.Valid(p.hdr) {
		return nil, nil, &FormatError{Offset: 8, Msg: "header is not valid UTF-8"}
	}
	if err := p.delim("", '{', "header"); err != nil {
		return nil, nil, err
	}
	f := &File{Tensors: map[string]Tensor{}, Metadata: map[string]string{}}
	var infos []info
	seen := map[string]bool{}
	for p.dec.More() {
		at := p.off()
		tok, err := p.token("")
		if err != nil {
			return nil, nil, err
		}
		name, ok := tok.(string)
		if !ok {
			return nil, nil, p.errorf("", "header: want a tensor name, got %s", describe(tok))
		}
		if seen[name] {
			return nil, nil, &FormatError{Offset: at, Tensor: name, Msg: "name appears twice in the header"}
		}
		seen[name] = true
		if name == metadataKey {
			if err := p.metadata(f.Metadata); err != nil {
				return nil, nil, err
			}
			continue
		}
		t, in, err := p.entry(name)
		if err != nil {
			return nil, nil, err
		}
		in.at = at
		f.Tensors[name] = t
		infos = append(infos, in)
	}
	if err := p.delim("", '}', "header"); err != nil {
		return nil, nil, err
	}
	for i, c := range p.hdr[p.dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil, nil, &FormatError{Offset: p.off() + int64(i), Msg: fmt.Sprintf("unexpected byte %q after the header object", c)}
		}
	}
	return f, infos, nil
}

// metadata reads the __metadata__ object: string keys to string values (or null for none).
func (p *headerParser) metadata(m map[string]string) error {
	tok, err := p.token("")
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if tok != json.Delim('{') {
		return p.errorf("", "__metadata__ must be an object of strings, got %s", describe(tok))
	}
	for p.dec.More() {
		at := p.off()
		tok, err := p.token("")
		if err != nil {
			return err
		}
		k, ok := tok.(string)
		if !ok {
			return p.errorf("", "__metadata__: want a key, got %s", describe(tok))
		}
		if _, dup := m[k]; dup {
			return &FormatError{Offset: at, Msg: fmt.Sprintf("metadata key %q appears twice", k)}
		}
		tok, err = p.token("")
		if err != nil {
			return err
		}
		v, ok := tok.(string)
		if !ok {
			return p.errorf("", "metadata %q: value must be a string, got %s", k, describe(tok))
		}
		m[k] = v
	}
	return p.delim("", '}', "__metadata__")
}

// entry reads one tensor's {"dtype":..., "shape":[...], "data_offsets":[b,e]} object and checks
// that the shape, dtype and byte range agree.
func (p *headerParser) entry(name string) (Tensor, info, error) {
	var (
		t                           Tensor
		in                          = info{name: name}
		haveDT, haveShape, haveOffs bool
	)
	if err := p.delim(name, '{', "tensor entry"); err != nil {
		return t, in, err
	}
	for p.dec.More() {
		tok, err := p.token(name)
		if err != nil {
			return t, in, err
		}
		key, ok := tok.(string)
		if !ok {
			return t, in, p.errorf(name, "tensor entry: want a field name, got %s", describe(tok))
		}
		switch key {
		case "dtype":
			if haveDT {
				return t, in, p.errorf(name, "dtype given twice")
			}
			haveDT = true
			tok, err := p.token(name)
			if err != nil {
				return t, in, err
			}
			s, ok := tok.(string)
			if !ok {
				return t, in, p.errorf(name, "dtype must be a string, got %s", describe(tok))
			}
			if t.DType, err = ParseDType(s); err != nil {
				return t, in, p.errorf(name, "%v", err)
			}
		case "shape":
			if haveShape {
				return t, in, p.errorf(name, "shape given twice")
			}
			haveShape = true
			dims, err := p.uints(name, "shape", -1)
			if err != nil {
				return t, in, err
			}
			t.Shape = make([]int, len(dims))
			for i, d := range dims {
				if d > math.MaxInt {
					return t, in, p.errorf(name, "shape dimension %d is too large (%d)", i, d)
				}
				t.Shape[i] = int(d)
			}
		case "data_offsets":
			if haveOffs {
				return t, in, p.errorf(name, "data_offsets given twice")
			}
			haveOffs = true
			offs, err := p.uints(name, "data_offsets", 2)
			if err != nil {
				return t, in, err
			}
			in.begin, in.end = offs[0], offs[1]
		default:
			return t, in, p.errorf(name, "unknown field %q in tensor entry", key)
		}
	}
	if err := p.delim(name, '}', "tensor entry"); err != nil {
		return t, in, err
	}
	switch {
	case !haveDT:
		return t, in, p.errorf(name, "dtype missing")
	case !haveShape:
		return t, in, p.errorf(name, "shape missing")
	case !haveOffs:
		return t, in, p.errorf(name, "data_offsets missing")
	case in.end < in.begin:
		return t, in, p.errorf(name, "data_offsets [%d,%d] end before they begin", in.begin, in.end)
	}
	size, err := byteCount(t.DType, t.Shape)
	if err != nil {
		return t, in, p.errorf(name, "%v", err)
	}
	if uint64(size) != in.end-in.begin {
		return t, in, p.errorf(name, "%v%v needs %d bytes but data_offsets [%d,%d] give %d", t.DType, t.Shape, size, in.begin, in.end, in.end-in.begin)
	}
	return t, in, nil
}

// uints reads an array of non-negative integers; want >= 0 demands exactly that many.
func (p *headerParser) uints(name, what string, want int) ([]uint64, error) {
	if err := p.delim(name, '[', what); err != nil {
		return nil, err
	}
	var out []uint64
	for p.dec.More() {
		tok, err := p.token(name)
		if err != nil {
			return nil, err
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, p.errorf(name, "%s: want a non-negative integer, got %s", what, describe(tok))
		}
		v, err := strconv.ParseUint(string(num), 10, 64)
		if err != nil {
			return nil, p.errorf(name, "%s: %s is not a non-negative 64-bit integer", what, num)
		}
		if want >= 0 && len(out) == want {
			return nil, p.errorf(name, "%s: more than %d values", what, want)
		}
		out = append(out, v)
	}
	if err := p.delim(name, ']', what); err != nil {
		return nil, err
	}
	if want >= 0 && len(out) != want {
		return nil, p.errorf(name, "%s: want %d values, got %d", what, want, len(out))
	}
	return out, nil
}
