package ckpt

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/anestar/anestar/internal/safefile"
)

// LoadMeta reads the metadata of the safetensors file at path from its header alone, without reading
// the tensors' data: what a run needs to know of a checkpoint (its model's sizes) before it builds the
// tensors to load it into. A defect in the header is a *FormatError whose Path is path.
func LoadMeta(path string) (map[string]string, error) {
	f, st, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	_, n, err := headerLength(f, path, st.Size())
	if err != nil {
		return nil, err
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("%s: read the %d-byte header: %w", path, n, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &top); err != nil {
		return nil, &FormatError{Path: path, Offset: 8, Msg: fmt.Sprintf("header is not a JSON object: %v", err)}
	}
	meta := map[string]string{}
	if raw, ok := top["__metadata__"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, &FormatError{Path: path, Offset: 8, Msg: fmt.Sprintf("__metadata__ is not an object of strings: %v", err)}
		}
	}
	return meta, nil
}
