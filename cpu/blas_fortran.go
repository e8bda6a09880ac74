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

// bindFortranSgemm binds sgemm_ from an opened library handle (32-bit integers, as in LP64 builds).
func bindFortranSgemm(handle uintptr) (sgemmFunc, error) {
	fn, err := purego.Dlsym(handle, "sgemm_")
	if err != nil {
		return nil, err
	}
	return foreign(func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
		b []float32, ldb int, beta float32, c []float32, ldc int) {
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

func fortranTrans(t bool) byte {
	if t {
		return 'T'
	}
	return 'N'
}
