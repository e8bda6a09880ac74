//go:build !amd64 || noasm

package cpu

// AMXUsable reports whether GemmF16 can run: never on this architecture or with the noasm tag.
func AMXUsable() bool { return false }

func gemmF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	return ErrNoAMX
}

// amxFormat has no instances on this architecture (AMXUsable is false): the dispatch's wrappers are
// never built.
type amxFormat struct{ three bool }

var f16Format, f32Format *amxFormat

func (*amxFormat) gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, accumulate bool, c []float32, ldc int) bool {
	return false
}
