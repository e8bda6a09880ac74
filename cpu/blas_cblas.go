//go:build darwin || linux

package cpu

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// CBLAS enumeration values shared by OpenBLAS and Accelerate.
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// cblasSgemm is the C signature of cblas_sgemm.
type cblasSgemm func(order, transA, transB, m, n, k int32, alpha float32, a []float32, lda int32,
	b []float32, ldb int32, beta float32, c []float32, ldc int32)

// bindCBLAS binds cblas_sgemm from an opened library handle.
func bindCBLAS(handle uintptr) (sgemmFunc, error) {
	var f cblasSgemm
	if err := bindFunc(&f, handle, "cblas_sgemm"); err != nil {
		return nil, err
	}
	return foreign(func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
		b []float32, ldb int, beta float32, c []float32, ldc int) {
		// Sizes were checked to fit int32 by checkSgemm.
		f(cblasRowMajor, cblasTrans32(transA), cblasTrans32(transB), int32(m), int32(n), int32(k),
			alpha, a, int32(lda), b, int32(ldb), beta, c, int32(ldc))
	}), nil
}

func cblasTrans32(t bool) int32 {
	if t {
		return cblasTrans
	}
	return cblasNoTrans
}

// bindFunc binds symbol name of handle to fptr, reporting a missing symbol
// as an error (purego.RegisterLibFunc alone would panic).
func bindFunc(fptr any, handle uintptr, name string) error {
	sym, err := purego.Dlsym(handle, name)
	if err != nil {
		return fmt.Errorf("symbol %s: %w", name, err)
	}
	purego.RegisterFunc(fptr, sym)
	return nil
}
