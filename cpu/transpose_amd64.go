//go:build !noasm

package cpu

import (
	"sync"

	"github.com/anestar/anestar/half"
)

// transposeAVX512 reports whether transpose16 can run: AVX-512F, its state saved by the OS.
var transposeAVX512 = sync.OnceValue(func() bool {
	f := half.X86()
	return f.AVX512F && f.XCR0&xcr0AVX512 == xcr0AVX512
})

// transpose16 writes the transpose of the 16x16 block at src (row stride lds elements) to the 16x16
// block at dst (row stride ldd), in AVX-512 registers (transpose_amd64.s).
//
//go:noescape
func transpose16(dst *float32, ldd int, src *float32, lds int)
