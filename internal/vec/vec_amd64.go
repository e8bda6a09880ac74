//go:build !noasm

package vec

import "github.com/anestar/anestar/internal/cpuid"

// vvAVX2 computes dst[j] = a[j] op b[j] for j < n, n a multiple of 8.
//
//go:noescape
func vvAVX2(op Op, dst, a, b *float32, n int)

// vsAVX2 computes dst[j] = a[j] op s for j < n, n a multiple of 8 (RSub and RDiv: s op a[j]).
//
//go:noescape
func vsAVX2(op Op, dst, a *float32, s float32, n int)

// rowsAxpyAVX2 computes dst[i] = sum over j < k of x[j]*b[j*ldb+i] for i < n, n a multiple of 8 (see
// RowsAxpy).
//
//go:noescape
func rowsAxpyAVX2(dst, x, b *float32, k, ldb, n int)

// rowsAxpyF16AVX2 is rowsAxpyAVX2 with B's values fp16 (F16C converts them) and each product added
// by a fused multiply-add (see RowsAxpyF16).
//
//go:noescape
func rowsAxpyF16AVX2(dst, x *float32, b *uint16, k, ldb, n int)

// maxAVX2 returns the largest of m and a[0..n), n a multiple of 8, NaN entries ignored (see Max).
//
//go:noescape
func maxAVX2(a *float32, n int, m float32) float32

var (
	hasVec      = cpuid.HasAVX2()
	hasRoundVec = hasVec && cpuid.HasF16C()
	hasRowsF16  = hasRoundVec && cpuid.X86().FMA // rowsAxpyF16AVX2's conversions and fused multiply-adds
)

// Has reports whether the CPU and OS run the vector code (AVX2).
func Has() bool { return hasVec }

// HasRound reports whether they run its rounding ops too (F16C).
func HasRound() bool { return hasRoundVec }

// HasRowsF16 reports whether RowsAxpyF16 runs (F16C and FMA).
func HasRowsF16() bool { return hasRowsF16 }

func vv(op Op, dst, a, b *float32, n int) { vvAVX2(op, dst, a, b, n) }

func vs(op Op, dst, a *float32, s float32, n int) { vsAVX2(op, dst, a, s, n) }

func rowsAxpy(dst, x, b *float32, k, ldb, n int) { rowsAxpyAVX2(dst, x, b, k, ldb, n) }

func rowsAxpyF16(dst, x *float32, b *uint16, k, ldb, n int) { rowsAxpyF16AVX2(dst, x, b, k, ldb, n) }

func maxOf(a *float32, n int, m float32) float32 { return maxAVX2(a, n, m) }
