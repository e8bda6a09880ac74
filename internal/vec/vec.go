// Package vec runs elementwise float32 arithmetic over runs of values eight lanes at a time, on amd64
// with AVX2 (and F16C for the ops that round their results to fp16), sixteen where AVX-512 runs. Each
// lane is the same IEEE float32 operation as the scalar code's (no fused multiply-add), so the bits are
// the same: callers run the vector code on a run's longest prefix of whole blocks and the scalar code on
// the rest. It serves the emulator's elementwise ops and the host's tensor arithmetic.
package vec

import "math"

// Op is an operation of the vector code: its values are the assembly's dispatch codes.
type Op int

// The operations.
const (
	Add  Op = iota // a + b
	Sub            // a - b
	Mul            // a * b
	Div            // a / b
	RSub           // s - a (VS only)
	RDiv           // s / a (VS only)

	Round Op = 8 // added to an op: the result rounded to fp16 (the assembly's second set of loops)
)

// MinRun is the shortest run worth a call into the vector code.
const MinRun = 32

// VV sets dst[j] = a[j] op b[j] over the longest prefix of whole blocks of eight of dst, and returns
// its length: 0 where there is no vector code (or none that rounds, for a Round op) or dst is shorter
// than MinRun. a and b hold at least as many values.
func VV(op Op, dst, a, b []float32) int {
	n := len(dst) &^ 7
	if !usable(op) || n < MinRun {
		return 0
	}
	_, _ = a[n-1], b[n-1]
	vv(op, &dst[0], &a[0], &b[0], n)
	return n
}

// VS is VV with a scalar second operand s (the first, for RSub and RDiv: s op a[j]).
func VS(op Op, dst, a []float32, s float32) int {
	n := len(dst) &^ 7
	if !usable(op) || n < MinRun {
		return 0
	}
	_ = a[n-1]
	vs(op, &dst[0], &a[0], s, n)
	return n
}

// RowsAxpy sets dst[i] = the sum over j < len(x) of x[j]*b[j*ldb+i] over the longest prefix of whole
// blocks of eight of dst, and returns its length: each product rounded to float32, then added to the sum
// in j's order from +0, the order of the scalar loop "s = s + float32(x[j]*b[j*ldb+i])" (a row of a
// product x·B, B row-major with leading dimension ldb). 0 where there is no vector code, x is empty or
// dst shorter than 8. b holds at least (len(x)-1)*ldb + len(dst) values.
func RowsAxpy(dst, x, b []float32, ldb int) int {
	n, k := len(dst)&^7, len(x)
	if !Has() || n == 0 || k == 0 {
		return 0
	}
	_ = b[(k-1)*ldb+n-1]
	rowsAxpy(&dst[0], &x[0], &b[0], k, ldb, n)
	return n
}

// RowsAxpyF16 is RowsAxpy with B's values fp16 bit patterns (each converted exactly to float32) and x's
// values fp16 too: the product of two fp16 values is exact in float32, so a fused multiply-add rounds
// as the loop's "s = s + float32(x[j]*b)" does, and gives its bits (for x not fp16 it may not).
// Half the bytes of B to read and one instruction a product: a small model's token's products against
// its weights. 0 where the vector code, its conversions (F16C) or FMA do not run (HasRowsF16).
func RowsAxpyF16(dst, x []float32, b []uint16, ldb int) int {
	n, k := len(dst)&^7, len(x)
	if !HasRowsF16() || n == 0 || k == 0 {
		return 0
	}
	_ = b[(k-1)*ldb+n-1]
	rowsAxpyF16(&dst[0], &x[0], &b[0], k, ldb, n)
	return n
}

// Max returns the largest of a, NaN entries ignored, -inf for none: the loop "if v > m { m = v }" from
// m = -inf, but for the sign of a zero maximum (-0 and +0 compare equal; which one the lanes keep
// depends on where they lie). Eight lanes at a time where the vector code runs.
func Max(a []float32) float32 {
	m, i := float32(math.Inf(-1)), 0
	if n := len(a) &^ 7; Has() && n >= MinRun {
		m, i = maxOf(&a[0], n, m), n
	}
	for _, v := range a[i:] {
		if v > m {
			m = v
		}
	}
	return m
}

// usable reports whether the vector code runs op here.
func usable(op Op) bool {
	if op >= Round {
		return HasRound()
	}
	return Has()
}
