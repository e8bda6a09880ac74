//go:build !amd64

package cpuid

// x86 are no features on this architecture.
var x86 X86Features
