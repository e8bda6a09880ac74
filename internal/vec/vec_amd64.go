//go:build !noasm

package vec

import (
	"unsafe"

	"github.com/anestar/anestar/internal/cpuid"
)

// vvAVX2 computes dst[j] = a[j] op b[j] for j < n, n a multiple of 8.
//
//go:noescape
func vvAVX2(op Op, dst, a, b *float32, n int)

// vsAVX2 computes dst[j] = a[j] op s for j < n, n a multiple of 8 (RSub and RDiv: s op a[j]).
//
//go:noescape
func vsAVX2(op Op, dst, a *float32, s float32, n int)

// vvAVX512 is vvAVX2 sixteen lanes at a time, n a multiple of 16.
//
//go:noescape
func vvAVX512(op Op, dst, a, b *float32, n int)

// vsAVX512 is vsAVX2 sixteen lanes at a time, n a multiple of 16.
//
//go:noescape
func vsAVX512(op Op, dst, a *float32, s float32, n int)

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
	// use512: VV and VS run sixteen lanes at a time where AVX-512F runs (its conversions on ZMM
	// registers included). On values in cache, as a chain's pieces and the softmax gradient's rows are,
	// that halves their time; the tests turn it off to check the AVX2 code too.
	use512 = hasVec && cpuid.HasAVX512()
)

// Has reports whether the CPU and OS run the vector code (AVX2).
func Has() bool { return hasVec }

// HasRound reports whether they run its rounding ops too (F16C).
func HasRound() bool { return hasRoundVec }

// HasRowsF16 reports whether RowsAxpyF16 runs (F16C and FMA).
func HasRowsF16() bool { return hasRowsF16 }

// vv and vs run whole blocks of sixteen on the AVX-512 code where it runs, the rest on the AVX2 code.
func vv(op Op, dst, a, b *float32, n int) {
	if m := n &^ 15; use512 && m > 0 {
		vvAVX512(op, dst, a, b, m)
		if m == n {
			return
		}
		dst, a, b, n = offset(dst, m), offset(a, m), offset(b, m), n-m
	}
	vvAVX2(op, dst, a, b, n)
}

func vs(op Op, dst, a *float32, s float32, n int) {
	if m := n &^ 15; use512 && m > 0 {
		vsAVX512(op, dst, a, s, m)
		if m == n {
			return
		}
		dst, a, n = offset(dst, m), offset(a, m), n-m
	}
	vsAVX2(op, dst, a, s, n)
}

// offset is p advanced by i values.
func offset(p *float32, i int) *float32 { return (*float32)(unsafe.Add(unsafe.Pointer(p), 4*i)) }

func rowsAxpy(dst, x, b *float32, k, ldb, n int) { rowsAxpyAVX2(dst, x, b, k, ldb, n) }

func rowsAxpyF16(dst, x *float32, b *uint16, k, ldb, n int) { rowsAxpyF16AVX2(dst, x, b, k, ldb, n) }

func maxOf(a *float32, n int, m float32) float32 { return maxAVX2(a, n, m) }
