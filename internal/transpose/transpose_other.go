//go:build !amd64 || noasm

package transpose

// HasBlock16 is false: no vector transpose on this architecture or with the noasm tag.
func HasBlock16() bool { return false }

// Block16 is never called where HasBlock16 is false.
func Block16(dst *float32, ldd int, src *float32, lds int) {
	panic("transpose: Block16 without AVX-512")
}
