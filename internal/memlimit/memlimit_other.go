//go:build !linux

package memlimit

func available() (uint64, bool) { return 0, false }

func addressSpaceLeft() (uint64, bool) { return 0, false }

// MappedBytes reports nothing: the address space is read on Linux only.
func MappedBytes() (uint64, bool) { return 0, false }
