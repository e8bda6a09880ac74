package ckpt

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"
)

// metadataKey is the header entry that holds the string metadata instead of a tensor.
const metadataKey = "__metadata__"

// File is the content of one safetensors file: named tensors and string metadata.
type File struct {
	Tensors  map[string]Tensor // by name
	Metadata map[string]string // free-form key/value strings (the header's __metadata__)
}

// layout is one tensor's place in the encoded data area.
type layout struct {
	name       string
	t          Tensor
	begin, end int
}

// order returns the tensors of f in file order, as the reference implementation lays them out:
// by decreasing dtype (so by decreasing element size, which keeps every tensor aligned to its
// element size), then by name. It validates every tensor and name.
func order(f *File) ([]layout, error) {
	out := make([]layout, 0, len(f.Tensors))
	for name, t := range f.Tensors {
		switch {
		case name == metadataKey:
			return nil, fmt.Errorf("tensor name %q is reserved for metadata", name)
		case !utf8.ValidString(name):
			return nil, fmt.Errorf("tensor name %q is not valid UTF-8", name)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("tensor %q: %w", name, err)
		}
		out = append(out, layout{name: name, t: t})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].t.DType != out[j].t.DType {
			return out[i].t.DType > out[j].t.DType
		}
		return out[i].name < out[j].name
	})
	off := 0
	for i := range out {
		out[i].begin = off
		off += len(out[i].t.Data)
		out[i].end = off
	}
	return out, nil
}

// appendJSONString appends s as a JSON string the way serde_json writes it: only '"', '\\'
// and control characters are escaped, so that the header matches the reference byte for byte.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// header returns the JSON header of f for the given layout, padded with spaces to a multiple
// of 8 bytes. Metadata keys are written sorted, so the output is deterministic.
func header(f *File, tensors []layout) ([]byte, error) {
	b := []byte{'{'}
	if len(f.Metadata) > 0 {
		keys := make([]string, 0, len(f.Metadata))
		for k, v := range f.Metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, fmt.Errorf("metadata %q is not valid UTF-8", k)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = appendJSONString(b, metadataKey)
		b = append(b, ':', '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, f.Metadata[k])
		}
		b = append(b, '}')
		if len(tensors) > 0 {
			b = append(b, ',')
		}
	}
	for i, l := range tensors {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, l.name)
		b = append(b, `:{"dtype":"`...)
		b = append(b, l.t.DType.String()...)
		b = append(b, `","shape":[`...)
		for j, d := range l.t.Shape {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(d), 10)
		}
		b = append(b, `],"data_offsets":[`...)
		b = strconv.AppendInt(b, int64(l.begin), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(l.end), 10)
		b = append(b, ']', '}')
	}
	b = append(b, '}')
	for len(b)%8 != 0 {
		b = append(b, ' ')
	}
	if len(b) > MaxHeader {
		return nil, fmt.Errorf("header of %d bytes exceeds the limit of %d", len(b), MaxHeader)
	}
	return b, nil
}

// Encode writes f to w in the safetensors format: an 8-byte little-endian header length, the
// JSON header, then the tensors' data. The output depends only on the content of f.
func Encode(w io.Writer, f *File) error {
	tensors, err := order(f)
	if err != nil {
		return err
	}
	hdr, err := header(f, tensors)
	if err != nil {
		return err
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(hdr)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	for _, l := range tensors {
		if len(l.t.Data) == 0 {
			continue
		}
		if _, err := w.Write(l.t.Data); err != nil {
			return err
		}
	}
	return nil
}

// EncodedSize returns the number of bytes Encode writes for f.
func EncodedSize(f *File) (int64, error) {
	tensors, err := order(f)
	if err != nil {
		return 0, err
	}
	hdr, err := header(f, tensors)
	if err != nil {
		return 0, err
	}
	size := int64(8 + len(hdr))
	if len(tensors) > 0 {
		size += int64(tensors[len(tensors)-1].end)
	}
	return size, nil
}
