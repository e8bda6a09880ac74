package ckpt

import (
	"fmt"
	"strings"
)

// FormatError reports a file that is not a valid safetensors or llama2.c file: what is wrong
// and where.
type FormatError struct {
	Path   string // file name, when the bytes came from a file
	Offset int64  // byte offset in the file at or near which the problem lies
	Tensor string // name of the tensor (or llama2.c array) concerned, if any
	Msg    string // what is wrong
}

// Error returns "PATH: byte OFFSET: tensor "NAME": what is wrong", leaving out what is unknown.
func (e *FormatError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "byte %d: ", e.Offset)
	if e.Tensor != "" {
		fmt.Fprintf(&b, "tensor %q: ", e.Tensor)
	}
	b.WriteString(e.Msg)
	return b.String()
}
