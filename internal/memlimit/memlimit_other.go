//go:build !linux

package memlimit

func available() (uint64, bool) { return 0, false }
