//go:build !amd64 || noasm

package half

// Without a vector implementation the bulk conversions are all scalar.

func roundF16Vec(dst, src []float32) int         { return 0 }
func encodeF16Vec(dst []byte, src []float32) int { return 0 }
func decodeF16Vec(dst []float32, src []byte) int { return 0 }

// use512 is never set here: there is no AVX-512 code.
var use512 = false
