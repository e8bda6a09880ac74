//go:build !amd64

package cpu

// features are none on this architecture.
var features x86Features

// HasAVX2 reports whether the CPU and the operating system support AVX2; never on this architecture.
func HasAVX2() bool { return false }
