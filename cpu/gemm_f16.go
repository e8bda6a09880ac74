package cpu

import (
	"errors"
	"fmt"
)

// GemmF16 is a matrix product for operands that hold fp16 values in float32, as the emulator's fp16
// numerics do: C = op(A)*op(B) with the same row-major conventions as Sgemm (alpha 1, beta 0). Where
// the CPU has Intel AMX (amx_tile and amx_bf16, the OS permitting tile data) it runs on AMX tiles: an
// fp16 value x splits exactly into two bf16 values, hi (x with its low 16 bits cleared) and
// lo = x - hi (at most 3 significant bits), so x*y = hi*hi' + hi*lo' + lo*hi' + lo*lo' with each
// partial product exact in fp32, and TDPBF16PS sums them in fp32 (round to nearest even), as an
// fp32 sgemm sums its exact fp16 products — in another order, so the result agrees with Sgemm's
// within an fp32 sgemm's rounding, not bit for bit.
//
// The contract is finite fp16 values. Infinities and NaNs are outside it (the split would turn
// inf*1 into inf*hi' + inf*lo' with lo' = 0, a NaN), as are float32 denormals (AMX reads bf16
// denormals as 0) and values with any of the low 13 bits of their float32 significand set, which
// no fp16 value has. All of these are detected while packing: GemmF16 then returns ErrNotF16 with C
// partly written (op(B) is packed as the product goes), and the caller computes C with Sgemm instead. (Values beyond
// fp16's range with fp16's precision split exactly and are accepted; their products may flush to
// zero below 2^-126, which no product of fp16 values reaches.)

// ErrNoAMX is GemmF16's error where AMX is not usable: another CPU or OS, the noasm build tag, or the
// kernel's refusal of tile data.
var ErrNoAMX = errors.New("cpu.GemmF16: AMX (amx_tile, amx_bf16) is not usable here")

// ErrNotF16 is GemmF16's error when an operand holds a value that is not a finite fp16 value.
var ErrNotF16 = errors.New("cpu.GemmF16: an operand holds a value that is not a finite fp16 value; use Sgemm")

// GemmF16 computes C = op(A)*op(B) for fp16-valued operands on AMX; see the comment above. It
// validates its arguments as Sgemm does and runs on the calling goroutine.
func GemmF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if !AMXUsable() {
		return ErrNoAMX
	}
	if err := checkSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return fmt.Errorf("cpu.GemmF16: %w", err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		scaleMatrix(m, n, 0, c, ldc)
		return nil
	}
	return gemmF16(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
}
