//go:build !noasm

package transpose

import (
	"sync"

	"github.com/anestar/anestar/half"
)

// xcr0AVX512 are the XCR0 bits of the state AVX-512 needs saved: SSE, AVX, opmask and the upper ZMM
// registers.
const xcr0AVX512 = 1<<1 | 1<<2 | 1<<5 | 1<<6 | 1<<7

// HasBlock16 reports whether Block16 can run: AVX-512F, its state saved by the OS.
var HasBlock16 = sync.OnceValue(func() bool {
	f := half.X86()
	return f.AVX512F && f.XCR0&xcr0AVX512 == xcr0AVX512
})

// Block16 writes the transpose of the 16x16 block at src (row stride lds elements) to the 16x16
// block at dst (row stride ldd), in AVX-512 registers (transpose_amd64.s).
//
//go:noescape
func Block16(dst *float32, ldd int, src *float32, lds int)
