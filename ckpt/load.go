package ckpt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/anestar/anestar/internal/safefile"
)

// Load reads and validates the safetensors file at path. Only a regular file is read, and only
// after its size is checked against the header's claim. A defect in the file is a *FormatError
// whose Path is path.
func Load(path string) (*File, error) {
	data, err := readChecked(path)
	if err != nil {
		return nil, err
	}
	f, err := Decode(data)
	if err != nil {
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	return f, nil
}

// readChecked reads the file at path whole once its 8-byte header length fits the file.
func readChecked(path string) ([]byte, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	head, _, err := headerLength(f, path, size)
	if err != nil {
		return nil, err
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %d bytes do not fit in memory here", path, size)
	}
	data := make([]byte, size)
	copy(data, head[:])
	if _, err := io.ReadFull(f, data[8:]); err != nil {
		return nil, fmt.Errorf("%s: read %d bytes: %w", path, size, err)
	}
	return data, nil
}

// headerLength reads the 8-byte header length at the start of f (size bytes long) and checks it against
// the limit and the file: the bytes read, and the length.
func headerLength(f io.Reader, path string, size int64) ([8]byte, uint64, error) {
	var head [8]byte
	if _, err := io.ReadFull(f, head[:]); err != nil {
		return head, 0, &FormatError{Path: path, Offset: 0, Msg: fmt.Sprintf("file of %d bytes is too short for the 8-byte header length", size)}
	}
	n := binary.LittleEndian.Uint64(head[:])
	if n > MaxHeader {
		return head, 0, &FormatError{Path: path, Msg: fmt.Sprintf("header length %d exceeds the limit of %d bytes", n, MaxHeader)}
	}
	if n > uint64(size-8) {
		return head, 0, &FormatError{Path: path, Msg: fmt.Sprintf("header length %d runs past the end of the %d-byte file", n, size)}
	}
	return head, n, nil
}
