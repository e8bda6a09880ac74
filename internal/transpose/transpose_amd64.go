//go:build !noasm

package transpose

import (
	"sync"

	"github.com/anestar/anestar/internal/cpuid"
)

// HasBlock16 reports whether Block16 can run: AVX-512F, its state saved by the OS.
var HasBlock16 = sync.OnceValue(func() bool {
	f := cpuid.X86()
	return f.AVX512F && f.XCR0&cpuid.XCR0AVX512 == cpuid.XCR0AVX512
})

// Block16 writes the transpose of the 16x16 block at src (row stride lds elements) to the 16x16
// block at dst (row stride ldd), in AVX-512 registers (transpose_amd64.s).
//
//go:noescape
func Block16(dst *float32, ldd int, src *float32, lds int)
