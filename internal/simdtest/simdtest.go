// Package simdtest runs a test over each register width of a package's vector code: the 256-bit code
// (AVX2 or F16C) always, the 512-bit code where the CPU runs it. Packages with both forms keep a use512
// switch; their tests run through here so that the 256-bit code, which CPUs without AVX-512 run, is
// tested on the machines that have it too. Only tests import it, and it imports nothing of anestar's.
package simdtest

import "testing"

// EachWidth runs f as the subtest "256" with *use512 false and, where *use512 was set (the CPU runs
// the 512-bit code), as "512" with it true; then it restores *use512.
func EachWidth(t *testing.T, use512 *bool, f func(t *testing.T)) {
	prev := *use512
	defer func() { *use512 = prev }()
	*use512 = false
	t.Run("256", f)
	if prev {
		*use512 = true
		t.Run("512", f)
	}
}
