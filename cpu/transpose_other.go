//go:build !amd64 || noasm

package cpu

// transposeAVX512 is false: no vector transpose on this architecture or with the noasm tag.
func transposeAVX512() bool { return false }

// transpose16 is never called where transposeAVX512 is false.
func transpose16(dst *float32, ldd int, src *float32, lds int) {
	panic("cpu: transpose16 without AVX-512")
}
