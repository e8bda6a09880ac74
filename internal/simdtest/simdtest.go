// Package simdtest runs a test or a benchmark over each register width of a package's vector code: the
// 256-bit code (AVX2 or F16C) always, the 512-bit code where the CPU runs it. Packages with both forms
// keep a use512 switch; their tests run through here so that the 256-bit code, which CPUs without
// AVX-512 run, is tested on the machines that have it too. Only tests import it, and it imports nothing
// of anestar's.
package simdtest

import "testing"

// EachWidth runs f as the subtest "256" with *use512 false and, where *use512 was set (the CPU runs
// the 512-bit code), as "512" with it true; then it restores *use512.
func EachWidth(t *testing.T, use512 *bool, f func(t *testing.T)) {
	widths(use512, func(name string) { t.Run(name, f) })
}

// EachWidthBench is EachWidth for a benchmark: f runs as the sub-benchmarks "256" and "512".
func EachWidthBench(b *testing.B, use512 *bool, f func(b *testing.B)) {
	widths(use512, func(name string) { b.Run(name, f) })
}

// widths calls run with *use512 false, then true where it was set, and restores it.
func widths(use512 *bool, run func(name string)) {
	prev := *use512
	defer func() { *use512 = prev }()
	*use512 = false
	run("256")
	if prev {
		*use512 = true
		run("512")
	}
}
