// Package floats is the host's arithmetic on float32 slices: elementwise + - * / between two slices
// or a slice and a number, negation, y += a·x, and reductions (sum, mean, max, min, L2 norm, dot)
// accumulated in float64. It is what a script's tensor operators and methods compute (package
// builtins' Tensor wraps it) and what Go code computes the same way, with the same bits.
//
// Every elementwise result is the one IEEE float32 operation of the scalar loop: the vector code of
// package vec runs the longest prefix of whole blocks where the CPU has it, and the scalar loop the
// rest, each lane the same operation (no fused multiply-add), so the results do not depend on the
// machine or on where a block boundary falls.
package floats

import (
	"math"

	"github.com/anestar/anestar/internal/vec"
)

// Op is an elementwise arithmetic operation.
type Op uint8

// The operations.
const (
	Add Op = iota // a + b
	Sub           // a - b
	Mul           // a * b
	Div           // a / b
)

// vecOps are the vector code's ops of the elementwise ops (same bits as the scalar loops).
var vecOps = [...]vec.Op{Add: vec.Add, Sub: vec.Sub, Mul: vec.Mul, Div: vec.Div}

// ApplyScalar sets d[i] = d[i] op f.
func ApplyScalar(op Op, d []float32, f float32) {
	d = d[vec.VS(vecOps[op], d, d, f):]
	switch op {
	case Add:
		for i := range d {
			d[i] += f
		}
	case Sub:
		for i := range d {
			d[i] -= f
		}
	case Mul:
		for i := range d {
			d[i] *= f
		}
	case Div:
		for i := range d {
			d[i] /= f
		}
	}
}

// ApplyScalarLeft sets d[i] = f op d[i].
func ApplyScalarLeft(op Op, f float32, d []float32) {
	switch op {
	case Add:
		ApplyScalar(Add, d, f)
	case Sub:
		for i := vec.VS(vec.RSub, d, d, f); i < len(d); i++ {
			d[i] = f - d[i]
		}
	case Mul:
		ApplyScalar(Mul, d, f)
	case Div:
		for i := vec.VS(vec.RDiv, d, d, f); i < len(d); i++ {
			d[i] = f / d[i]
		}
	}
}

// Apply sets d[i] = d[i] op s[i]; s holds at least len(d) values.
func Apply(op Op, d, s []float32) {
	s = s[:len(d)]
	n := vec.VV(vecOps[op], d, d, s)
	d, s = d[n:], s[n:]
	switch op {
	case Add:
		for i := range d {
			d[i] += s[i]
		}
	case Sub:
		for i := range d {
			d[i] -= s[i]
		}
	case Mul:
		for i := range d {
			d[i] *= s[i]
		}
	case Div:
		for i := range d {
			d[i] /= s[i]
		}
	}
}

// Neg sets dst[i] = -src[i]; src holds at least len(dst) values.
func Neg(dst, src []float32) {
	src = src[:len(dst)]
	for i, x := range src {
		dst[i] = -x
	}
}

// Fill sets every element of d to f.
func Fill(d []float32, f float32) {
	for i := range d {
		d[i] = f
	}
}

// Axpy sets y[i] += a*x[i] (rounded twice, as float32: no fused multiply-add); x holds at least
// len(y) values.
func Axpy(a float32, x, y []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// Sum returns the sum of d, accumulated in float64 in order.
func Sum(d []float32) float64 {
	var s float64
	for _, x := range d {
		s += float64(x)
	}
	return s
}

// Mean returns Sum(d) / len(d) (NaN for an empty d).
func Mean(d []float32) float64 { return Sum(d) / float64(len(d)) }

// Max returns the largest element of d, or the first NaN; d must not be empty.
func Max(d []float32) float64 { return extreme(d, true) }

// Min returns the smallest element of d, or the first NaN; d must not be empty.
func Min(d []float32) float64 { return extreme(d, false) }

// extreme is Max (max) or Min.
func extreme(d []float32, max bool) float64 {
	m := float64(d[0])
	for _, x := range d[1:] {
		if (max && float64(x) > m) || (!max && float64(x) < m) || x != x {
			m = float64(x)
			if x != x {
				return m
			}
		}
	}
	return m
}

// Norm returns the L2 norm of d, the squares accumulated in float64.
func Norm(d []float32) float64 {
	var s float64
	for _, x := range d {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Dot returns the sum of a[i]*b[i], each product and the sum in float64; b holds at least len(a)
// values.
func Dot(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		s += float64(v) * float64(b[i])
	}
	return s
}
