package cpu

// ReferenceBLAS is the name of the fixed-order implementation: a plain triple loop that sums every
// element of C over k in ascending order, one float32 product and one float32 addition at a time,
// whatever the shape, blocking or transpose flags of the product. It is never chosen by "auto"; it is
// there so that a rewrite of our own (a fused chain, a folded transpose, a product computed by row
// blocks) can be tested bit for bit against the program it replaces — a property of our code — without
// depending on the summation order of one BLAS on one machine (which no BLAS promises). It is slow:
// for tests and for diagnosing a suspected BLAS problem (ANESTAR_BLAS=reference).
const ReferenceBLAS = "reference"

// loadReference returns the fixed-order implementation, which always loads.
func loadReference() (*library, error) {
	return &library{name: ReferenceBLAS, info: BLASInfo{Name: ReferenceBLAS, CoreChoice: CoreNA}, sgemm: referenceSgemm}, nil
}

// referenceSgemm computes C = alpha*op(A)*op(B) + beta*C element by element. The explicit float32
// conversions keep the compiler from fusing a product and a sum into one FMA (the Go spec allows that
// on some architectures), so the bits are the same on every machine.
func referenceSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float32
			for p := range k {
				var x, y float32
				if transA {
					x = a[p*lda+i]
				} else {
					x = a[i*lda+p]
				}
				if transB {
					y = b[j*ldb+p]
				} else {
					y = b[p*ldb+j]
				}
				s = s + float32(x*y)
			}
			r := float32(alpha * s)
			if beta != 0 {
				r = r + float32(beta*c[i*ldc+j])
			}
			c[i*ldc+j] = r
		}
	}
}
