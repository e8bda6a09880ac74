//go:build darwin || linux

package cpu

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The Fortran-style sgemm_ takes every argument by pointer, so it can be called through
// purego.SyscallN with integer registers only. Unlike a function bound with purego.RegisterFunc, whose
// reflective call allocates on every call, this path allocates nothing: the scalar arguments live in a
// pooled frame on the heap. Fortran is column-major, so the row-major product C = op(A)·op(B) is
// computed as the column-major C^T = op(B)^T·op(A)^T.

// fortranFrame holds the by-pointer scalar arguments of one sgemm_ call.
type fortranFrame struct {
	transA, transB byte
	m, n, k        int32
	lda, ldb, ldc  int32
	alpha, beta    float32
	args           [13]uintptr // the call's arguments, kept here so that the variadic call does not allocate
}

var fortranFrames = sync.Pool{New: func() any { return new(fortranFrame) }}

// gemvFrame holds the by-pointer scalar arguments of one sgemv_ call.
type gemvFrame struct {
	trans           byte
	m, n            int32
	lda, incx, incy int32
	alpha, beta     float32
	args            [11]uintptr
}

var gemvFrames = sync.Pool{New: func() any { return new(gemvFrame) }}

// bindFortranSgemm binds sgemm_ from an opened library handle (32-bit integers, as in LP64 builds).
// A product with one column or one row (a matrix times a vector: generation's one token) goes to the
// library's sgemv_ where it has one: a third to a fifth of sgemm_'s time at those shapes (OpenBLAS 0.3.21,
// 64 to 344 rows); sgemm_ would pack its operands first.
func bindFortranSgemm(handle uintptr) (sgemmFunc, error) {
	fn, err := purego.Dlsym(handle, "sgemm_")
	if err != nil {
		return nil, err
	}
	gemv, _ := purego.Dlsym(handle, "sgemv_") // 0 where the library has none
	return foreign(func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
		b []float32, ldb int, beta float32, c []float32, ldc int) {
		if n == 1 && gemv != 0 {
			fortranGemv(gemv, transA, transB, m, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
		if m == 1 && gemv != 0 { // C^T (n x 1) = op(B)^T op(A)^T: B's rows are the matrix
			fortranGemv(gemv, !transB, !transA, n, k, alpha, b, ldb, a, lda, beta, c, 1)
			return
		}
		f := fortranFrames.Get().(*fortranFrame)
		// Column-major C^T (n x m) = op(B)^T (n x k) · op(A)^T (k x m): B comes first.
		f.transA, f.transB = fortranTrans(transB), fortranTrans(transA)
		f.m, f.n, f.k = int32(n), int32(m), int32(k)
		f.lda, f.ldb, f.ldc = int32(ldb), int32(lda), int32(ldc)
		f.alpha, f.beta = alpha, beta
		f.args = [13]uintptr{
			uintptr(unsafe.Pointer(&f.transA)), uintptr(unsafe.Pointer(&f.transB)),
			uintptr(unsafe.Pointer(&f.m)), uintptr(unsafe.Pointer(&f.n)), uintptr(unsafe.Pointer(&f.k)),
			uintptr(unsafe.Pointer(&f.alpha)),
			uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&f.lda)),
			uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&f.ldb)),
			uintptr(unsafe.Pointer(&f.beta)),
			uintptr(unsafe.Pointer(&c[0])), uintptr(unsafe.Pointer(&f.ldc))}
		purego.SyscallN(fn, f.args[:]...)
		// a, b and c are reachable only through uintptrs in f.args during the call.
		runtime.KeepAlive(a)
		runtime.KeepAlive(b)
		runtime.KeepAlive(c)
		f.args = [13]uintptr{}
		fortranFrames.Put(f)
	}), nil
}

// fortranGemv computes the row-major C (m x 1) = alpha op(A) op(B) + beta C, op(B) a column of k, with
// sgemv_ at fn. Row-major A (m x k, no transpose) is the column-major k x m A^T, so its product is
// sgemv_('T'); a transposed A (stored k x m) is column-major m x k, sgemv_('N'). op(B)'s elements are
// ldb apart (B is k x 1) or adjacent (B^T is 1 x k); C's are ldc apart.
func fortranGemv(fn uintptr, transA, transB bool, m, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) {
	f := gemvFrames.Get().(*gemvFrame)
	f.trans, f.m, f.n = 'T', int32(k), int32(m)
	if transA {
		f.trans, f.m, f.n = 'N', int32(m), int32(k)
	}
	f.lda, f.incx, f.incy = int32(lda), int32(ldb), int32(ldc)
	if transB {
		f.incx = 1
	}
	f.alpha, f.beta = alpha, beta
	f.args = [11]uintptr{
		uintptr(unsafe.Pointer(&f.trans)), uintptr(unsafe.Pointer(&f.m)), uintptr(unsafe.Pointer(&f.n)),
		uintptr(unsafe.Pointer(&f.alpha)), uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&f.lda)),
		uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&f.incx)),
		uintptr(unsafe.Pointer(&f.beta)), uintptr(unsafe.Pointer(&c[0])), uintptr(unsafe.Pointer(&f.incy))}
	purego.SyscallN(fn, f.args[:]...)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	f.args = [11]uintptr{}
	gemvFrames.Put(f)
}

func fortranTrans(t bool) byte {
	if t {
		return 'T'
	}
	return 'N'
}
