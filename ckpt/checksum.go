package ckpt

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
)

// ChecksumKey is the metadata entry in which Save stores a CRC-32C of each tensor's bytes, as a
// JSON object of tensor name to 8 hex digits. Decode checks it and removes it from the metadata
// it returns; other safetensors readers see an ordinary string entry and ignore it.
const ChecksumKey = "anestar/crc32c"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the CRC-32C of data as 8 hex digits.
func checksum(data []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(data, castagnoli))
}

// withChecksums returns a copy of f whose metadata holds the checksums of its tensors.
func withChecksums(f *File) (*File, error) {
	if _, ok := f.Metadata[ChecksumKey]; ok {
		return nil, fmt.Errorf("metadata key %q is reserved", ChecksumKey)
	}
	sums := make(map[string]string, len(f.Tensors))
	for name, t := range f.Tensors {
		sums[name] = checksum(t.Data)
	}
	b, err := json.Marshal(sums) // map keys are sorted: the file is a function of its content
	if err != nil {
		return nil, err
	}
	g := &File{Tensors: f.Tensors, Metadata: maps.Clone(f.Metadata)}
	if g.Metadata == nil {
		g.Metadata = map[string]string{}
	}
	g.Metadata[ChecksumKey] = string(b)
	return g, nil
}

// verifyChecksums checks the tensors of a decoded f against its ChecksumKey entry, if any, and
// removes the entry. at is the file offset reported for a malformed entry.
func verifyChecksums(f *File, at int64) error {
	text, ok := f.Metadata[ChecksumKey]
	if !ok {
		return nil
	}
	var sums map[string]string
	if err := json.Unmarshal([]byte(text), &sums); err != nil {
		return &FormatError{Offset: at, Msg: fmt.Sprintf("metadata %q: not a JSON object of checksums: %v", ChecksumKey, err)}
	}
	for _, name := range sortedNames(f.Tensors) {
		want, ok := sums[name]
		if !ok {
			return &FormatError{Offset: at, Tensor: name, Msg: fmt.Sprintf("metadata %q has no checksum for this tensor: the file was altered after it was saved", ChecksumKey)}
		}
		if _, err := strconv.ParseUint(want, 16, 32); err != nil || len(want) != 8 {
			return &FormatError{Offset: at, Tensor: name, Msg: fmt.Sprintf("metadata %q: checksum %q is not 8 hex digits", ChecksumKey, want)}
		}
		if got := checksum(f.Tensors[name].Data); got != want {
			return &FormatError{Offset: at, Tensor: name, Msg: fmt.Sprintf("data has CRC-32C %s, the checksum saved with it is %s: the file is corrupt (a flipped bit or a bad copy); use an older checkpoint", got, want)}
		}
	}
	for name := range sums {
		if _, ok := f.Tensors[name]; !ok {
			return &FormatError{Offset: at, Tensor: name, Msg: fmt.Sprintf("metadata %q names a tensor the file does not hold: the file was altered after it was saved", ChecksumKey)}
		}
	}
	delete(f.Metadata, ChecksumKey)
	return nil
}

// sortedNames returns the tensor names of m in order, so that the first offender is reported
// deterministically.
func sortedNames(m map[string]Tensor) []string {
	return slices.Sorted(maps.Keys(m))
}
