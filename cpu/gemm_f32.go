package cpu

import (
	"errors"
	"fmt"
)

// GemmF32 is a matrix product on AMX tiles for float32 operands: C = op(A)*op(B) + beta*C with beta
// 0 or 1, the same row-major conventions as Sgemm. Each float32 splits exactly into three bf16 values
// (h = bf16(x), m = bf16(x - h), l = x - h - m, rounded to nearest even), and six of the nine partial
// products of x*y — all but m*l', l*m' and l*l', together at most about 2^-23 |x*y| — are summed by
// TDPBF16PS in fp32, each partial product exact. The error is that of an fp32 sgemm in kind: a
// relative truncation of each product of about fp32's unit roundoff, and fp32 sums, six per k where a
// BLAS has one, so its bound is a few times a BLAS's (typically √6 times: TestGemmF32Accuracy
// measures it). Results agree with Sgemm's within fp32 rounding, not bit for bit. Where neither
// operand has a third part (fp16 values have none) the products run at GemmF16's speed.
//
// The contract is float32 values that split into parts AMX reads as they are: zeros, and values of
// magnitude from 2^-103 (below, m or l may be bf16 denormals, which AMX reads as 0) up to, not
// including, 0x1.FFp127 (from there h rounds to a bf16 infinity) — no infinities, NaNs or float32
// denormals. Partial products below 2^-126 and sums that small flush to zero (AMX has no
// denormals), an absolute error of at most 2^-126 per product. Values outside the contract are
// detected while packing: GemmF32 then returns ErrNotF32 (C unchanged when beta is 1, partly
// written when it is 0) and the
// caller computes C with Sgemm.

// ErrNotF32 is GemmF32's error when an operand holds a value outside its contract.
var ErrNotF32 = errors.New("cpu.GemmF32: an operand holds a value outside the AMX fp32 contract; use Sgemm")

// GemmF32 computes C = op(A)*op(B) + beta*C, beta 0 or 1, on AMX; see the comment above. It validates
// its arguments as Sgemm does and runs on the calling goroutine.
func GemmF32(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if !AMXUsable() {
		return ErrNoAMX
	}
	if beta != 0 && beta != 1 {
		return fmt.Errorf("cpu.GemmF32: beta = %g, want 0 or 1", beta)
	}
	if err := checkSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return fmt.Errorf("cpu.GemmF32: %w", err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		scaleMatrix(m, n, beta, c, ldc)
		return nil
	}
	if !f32Format.gemm(transA, transB, m, n, k, a, lda, b, ldb, beta == 1, c, ldc) {
		return ErrNotF32
	}
	return nil
}
