package emulator

import (
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// tensor is one value of a compiled program: a function input, a constant or an op result. Its buffer is
// allocated at compile time (or aliases another tensor's) and is reused by every Eval.
type tensor struct {
	name    string    // MIL name
	shape   []int     // static shape
	dtype   mil.DType // declared element type; decides fp16 rounding
	data    []float32 // the values in row-major order; numbers of every dtype are held as float32
	konst   bool      // a compile-time constant
	roundIn bool      // a function input whose only reader casts it to fp16: its transfer rounds it on the way in
	lay     *layout   // a view read in place (inplace.go); nil when data holds the values densely
}

// numel is the element count of a shape.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// stridesOf returns the row-major strides of shape.
func stridesOf(shape []int) []int {
	s := make([]int, len(shape))
	n := 1
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = n
		n *= shape[i]
	}
	return s
}

// sameShape reports whether a and b are the same dims.
func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// roundGrain is the piece size for parallel fp16 rounding.
const roundGrain = 1 << 14

// roundSlice rounds every element of x to fp16.
func roundSlice(x []float32) { half.RoundF16To(x, x) }

// isFloat16 reports whether values of dtype d are stored in half precision.
func isFloat16(d mil.DType) bool { return d == mil.FP16 }
