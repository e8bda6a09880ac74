package ckpt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"io"
	"math"
	"os"
)

// Llama2Header is what the header of a llama2.c file says, checked against the file's size.
type Llama2Header struct {
	Version int          // 0 (legacy) or 1
	Config  Llama2Config // the sizes and the classifier flag
	Size    int64        // the file's size in bytes, exactly what the header calls for
}

// Tensors lists the file's tensors in file order with their byte offsets (version 0's RoPE
// tables, which are not tensors of the model, are left out).
func (h Llama2Header) Tensors() []Llama2Placed {
	shapes := map[string][]int{}
	for _, t := range h.Config.Tensors() {
		shapes[t.Name] = t.Shape
	}
	var out []Llama2Placed
	llama2Entries(h.Config, h.Version, func(e llama2Entry) bool {
		if !e.skip {
			out = append(out, Llama2Placed{Llama2Tensor{e.name, shapes[e.name]}, int64(e.offset)})
		}
		return true
	})
	return out
}

// Llama2Placed is a tensor of a llama2.c file and where its float32 data starts.
type Llama2Placed struct {
	Llama2Tensor
	Offset int64 // byte offset in the file
}

// ReadLlama2 reads the llama2.c model file at path (version 0 or 1; version 2 is refused). The
// file must be a regular file whose size is exactly what its header calls for; the weights are
// read straight into their float32 slices, so the model is in memory once. A defect is a
// *FormatError whose Path is path.
func ReadLlama2(path string) (*Llama2Model, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := DecodeLlama2(f, size)
	return m, withPath(err, path)
}

// ReadLlama2Header reads and checks only the header of the llama2.c file at path.
func ReadLlama2Header(path string) (Llama2Header, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return Llama2Header{}, err
	}
	defer f.Close()
	h, err := DecodeLlama2Header(f, size)
	return h, withPath(err, path)
}

// openRegular opens path for reading if it is a regular file (see safefile.Open: it never blocks
// on a FIFO), and returns its size.
func openRegular(path string) (*os.File, int64, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// withPath sets the Path of a *FormatError in err.
func withPath(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return err
}

// DecodeLlama2Header reads the header of a llama2.c file of size bytes from r and checks it:
// version 1 is told by its magic (version 2 and others are refused), anything else is read as
// version 0. Every field is checked, and the sizes it gives must add up (without overflow) to
// exactly size, before anything is allocated from them. Any defect is a *FormatError naming
// the field or the tensor and its byte offset.
func DecodeLlama2Header(r io.ReaderAt, size int64) (Llama2Header, error) {
	var hdr [llama2V1Header]byte
	n, err := r.ReadAt(hdr[:min(int64(len(hdr)), max(size, 0))], 0)
	if err != nil && err != io.EOF {
		return Llama2Header{}, err
	}
	b := hdr[:n]
	le := binary.LittleEndian
	h := Llama2Header{Size: size}
	fieldBase := int64(0)
	if len(b) >= 4 && le.Uint32(b) == llama2Magic {
		if len(b) < 8 {
			return h, &FormatError{Offset: int64(len(b)), Msg: "file ends inside the version field of a llama2.c header"}
		}
		switch v := int32(le.Uint32(b[4:])); v {
		case 1:
		case 2:
			return h, &FormatError{Offset: 4, Msg: "llama2.c version 2 (Q8_0 int8 weights) is not supported: export the model in fp32, version 1 or 0 (export.py --version 0)"}
		default:
			return h, &FormatError{Offset: 4, Msg: fmt.Sprintf("unknown llama2.c version %d after the magic (known: 1; 0 has no magic; 2 is not supported)", v)}
		}
		if len(b) < llama2V1Header {
			return h, &FormatError{Offset: int64(len(b)), Msg: fmt.Sprintf("file of %d bytes is too short for the %d-byte llama2.c version 1 header", len(b), llama2V1Header)}
		}
		h.Version = 1
		fieldBase = 8
	} else if len(b) < llama2V0Header {
		return h, &FormatError{Offset: int64(len(b)), Msg: fmt.Sprintf("file of %d bytes is too short for the %d-byte llama2.c version 0 header", len(b), llama2V0Header)}
	}
	var v [7]int
	for i := range v {
		v[i] = int(int32(le.Uint32(b[fieldBase+4*int64(i):])))
	}
	c := Llama2Config{Dim: v[0], Hidden: v[1], Layers: v[2], Heads: v[3], KVHeads: v[4], Vocab: v[5], MaxSeqLen: v[6], Shared: true}
	if h.Version == 0 && c.Vocab < 0 {
		// A negative vocab_size is version 0's mark of a classifier of its own.
		c.Vocab, c.Shared = -c.Vocab, false
	}
	if h.Version == 1 {
		switch flag := b[36]; flag {
		case 0, 1:
			c.Shared = flag == 1
		default:
			return h, &FormatError{Offset: 36, Msg: fmt.Sprintf("shared_classifier flag is %d, want 0 or 1", flag)}
		}
		for i := 37; i < llama2V1Header; i++ {
			if b[i] != 0 {
				return h, &FormatError{Offset: int64(i), Msg: fmt.Sprintf("header padding byte is %#x, want 0", b[i])}
			}
		}
	}
	if ce := c.validate(); ce != nil {
		if h.Version == 0 && v[5] < 0 && ce.field == 5 { // say the value the file holds, and what its sign means
			ce.msg = fmt.Sprintf("vocab_size = %d (negative: a classifier of its own, of %d pieces): the size must be between 1 and %d", v[5], -int64(v[5]), math.MaxInt32)
		}
		msg := "llama2.c version 0 header"
		if h.Version == 1 {
			msg = "llama2.c version 1 header"
		}
		if LooksLikeSafetensors(b) {
			ce.msg += " (this is a safetensors checkpoint, not a llama2.c model file)"
		}
		return h, &FormatError{Offset: fieldBase + 4*int64(ce.field), Msg: msg + ": " + ce.msg}
	}
	h.Config = c
	want, err := llama2Size(c, h.Version)
	if err != nil {
		return h, &FormatError{Msg: fmt.Sprintf("llama2.c version %d header %s: %v", h.Version, c, err)}
	}
	if want > uint64(size) {
		// Name the first array that does not fit. Each is at least 4 bytes, so this stops
		// within size/4 steps whatever the header claims.
		fe := &FormatError{Offset: size, Msg: fmt.Sprintf("file of %d bytes is truncated: the version %d header %s calls for %d bytes", size, h.Version, c, want)}
		llama2Entries(c, h.Version, func(e llama2Entry) bool {
			if e.offset+4*e.n <= uint64(size) {
				return true
			}
			fe.Offset, fe.Tensor = int64(e.offset), e.name
			fe.Msg = fmt.Sprintf("%d float32 (%d bytes) at byte %d run past the end of the %d-byte file (truncated, or not a version %d file: header %s calls for %d bytes)",
				e.n, 4*e.n, e.offset, size, h.Version, c, want)
			return false
		})
		return h, fe
	}
	if want < uint64(size) {
		return h, &FormatError{Offset: int64(want), Msg: fmt.Sprintf("%d bytes after the last tensor: the version %d header %s calls for %d bytes, the file has %d", uint64(size)-want, h.Version, c, want, size)}
	}
	return h, nil
}

// String prints the config as its header fields, e.g. "dim=64 hidden_dim=172 ... shared=true".
func (c Llama2Config) String() string {
	s := ""
	for i, v := range c.fields() {
		s += fmt.Sprintf("%s=%d ", llama2Fields[i], v)
	}
	return s + fmt.Sprintf("shared=%v", c.Shared)
}

// DecodeLlama2 reads a whole llama2.c file of size bytes from r: the header, checked as
// DecodeLlama2Header checks it, then every tensor, read in file order into its own float32
// slice. Version 0's RoPE tables are skipped: they follow from the sizes.
func DecodeLlama2(r io.ReaderAt, size int64) (*Llama2Model, error) {
	h, err := DecodeLlama2Header(r, size)
	if err != nil {
		return nil, err
	}
	m := &Llama2Model{Config: h.Config, Version: h.Version, Weights: map[string][]float32{}}
	buf := make([]byte, 1<<16)
	var rerr error
	llama2Entries(h.Config, h.Version, func(e llama2Entry) bool {
		if e.skip {
			return true
		}
		w := make([]float32, e.n)
		for done := uint64(0); done < e.n; {
			k := min(e.n-done, uint64(len(buf)/4))
			at := e.offset + 4*done
			if _, err := r.ReadAt(buf[:4*k], int64(at)); err != nil {
				rerr = &FormatError{Offset: int64(at), Tensor: e.name, Msg: fmt.Sprintf("reading %d bytes: %v (file changed while read?)", 4*k, err)}
				return false
			}
			for i := range k {
				w[done+i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
			}
			done += k
		}
		m.Weights[e.name] = w
		return true
	})
	if rerr != nil {
		return nil, rerr
	}
	return m, nil
}
