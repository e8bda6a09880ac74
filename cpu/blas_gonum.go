package cpu

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// loadGonum returns gonum's pure-Go BLAS, which always loads; it spreads
// large products over GOMAXPROCS goroutines itself.
func loadGonum() (*library, error) {
	return &library{name: "gonum", info: BLASInfo{Name: "gonum", CoreChoice: CoreNA}, sgemm: gonumSgemm}, nil
}

func gonumSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) {
	gonum.Implementation{}.Sgemm(gonumTrans(transA), gonumTrans(transB), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func gonumTrans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
