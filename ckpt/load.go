package ckpt

import (
	"errors"
	"os"
)

// Load reads and validates the safetensors file at path. A defect in the file is a
// *FormatError whose Path is path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
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
