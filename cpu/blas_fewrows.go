package cpu

import "github.com/anestar/anestar/internal/vec"

// fewRows is the most rows of C that a product with B not transposed runs as rows of the fixed-order
// loop on the vector code (fewRowsSgemm) instead of the library: a token's attention in generation
// has products of 2 rows (a kv head's queries) by 8 (the head's size) against a cache of up to seq
// columns, where a library call cost about four times the loop. The bits are the fixed-order loop's
// (referenceSgemm's) on every machine and library.
const fewRows = 4

// fewRowsB is the most values of B such a product has: the loop reads B a block of columns at a time
// down all its rows, which suits a B that stays in cache (a small model's weights, 256 KB in float32),
// not a large one (a 1536 x 288 matrix took 1.4x the library's time).
const fewRowsB = 1 << 16

// fewRowsSgemm is C = op(A) B for m <= fewRows rows, alpha 1 and beta 0, n >= 8 and the vector code
// present: each row of C the sum over p of op(A)'s row element p times B's row p, in p's order, eight
// columns at a time (vec.RowsAxpy), the columns past the last whole eight by referenceSgemm.
func fewRowsSgemm(transA bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	var buf [64]float32
	done := n &^ 7
	for i := range m {
		var x []float32
		if !transA {
			x = a[i*lda : i*lda+k]
		} else { // row i of op(A) is column i of the stored k x m A
			x = buf[:0]
			if k > len(buf) {
				x = make([]float32, 0, k)
			}
			for p := range k {
				x = append(x, a[p*lda+i])
			}
		}
		vec.RowsAxpy(c[i*ldc:i*ldc+done], x, b, ldb)
	}
	if done < n {
		referenceSgemm(transA, false, m, n-done, k, 1, a, lda, b[done:], ldb, 0, c[done:], ldc)
	}
}
