package cpu

import (
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/internal/par"
)

// When the BLAS library runs single-threaded (OpenBLAS by default here), Sgemm spreads a large product
// over GOMAXPROCS goroutines itself, in blocks of rows (or columns) of C, one library call each. The
// blocks are fixed by the product's shape and GOMAXPROCS (splitPieces), and SgemmInTurn computes the
// same blocks in turn, so that a product's bits never depend on the load. The Go
// scheduler then shares the cores between those calls and everything else the program runs (the
// emulator's loops, queued host math), where a multi-threaded BLAS would start its own threads, whose
// spinning waits compete with them. The blocks run on package par's helpers, which claim them as they
// come free: a helper that starts late leaves its block to the caller instead of keeping it waiting.

// splitFLOPs is the size (2*m*n*k) from which a product is split.
const splitFLOPs = 1 << 23

// splitAlign is the granularity of a piece's rows or columns (a multiple of the kernels' unrolling).
const splitAlign = 16

// gemmSplit is one split product: its operands, and the core slots reserved for helpers.
type gemmSplit struct {
	l              *library
	transA, transB bool
	byRows         bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	off            int              // the first row (or column) of the pieces piece runs, the rest done
	reserved       atomic.Int32     // core slots taken for helpers and not yet handed to one
	piece          func(lo, hi int) // s.runFrom, bound once
	join           func() bool      // s.take, bound once
}

var splits = sync.Pool{New: func() any {
	s := new(gemmSplit)
	s.piece, s.join = s.runFrom, s.take
	return s
}}

// leaveSplit hands back the core slot of a helper that has run its pieces.
func leaveSplit() { releaseCore() }

// take hands one reserved core slot to a helper; false when none is left (the caller then runs the
// pieces).
func (s *gemmSplit) take() bool {
	for {
		r := s.reserved.Load()
		if r <= 0 {
			return false
		}
		if s.reserved.CompareAndSwap(r, r-1) {
			return true
		}
	}
}

// runFrom computes rows (or columns) [off+lo, off+hi) of the product: the pieces left at s.off.
func (s *gemmSplit) runFrom(lo, hi int) { s.run(s.off+lo, s.off+hi) }

// run computes rows (or columns) [lo, hi) of the product.
func (s *gemmSplit) run(lo, hi int) {
	a, b, c, m, n := s.a, s.b, s.c, s.m, s.n
	if s.byRows { // rows [lo, hi) of op(A) and C
		m = hi - lo
		if s.transA {
			a = a[lo:]
		} else {
			a = a[lo*s.lda:]
		}
		c = c[lo*s.ldc:]
	} else { // columns [lo, hi) of op(B) and C
		n = hi - lo
		if s.transB {
			b = b[lo*s.ldb:]
		} else {
			b = b[lo:]
		}
		c = c[lo:]
	}
	s.l.sgemm(s.transA, s.transB, m, n, s.k, s.alpha, a, s.lda, b, s.ldb, s.beta, c, s.ldc)
}

// splitPieces returns the size (in rows when byRows, else in columns) and the count of the pieces a
// product of m x n x k is computed in: a function of the shape and of par.Procs (GOMAXPROCS) alone, never
// of the cores free when it starts, so that the same product gives the same bits under any load (a
// BLAS kernel's sums may depend on the block it is given: OpenBLAS's Haswell edge kernels do). One
// piece means the product is not split.
func splitPieces(m, n, k int) (size, pieces int, byRows bool) {
	byRows = m >= n
	span := n
	if byRows {
		span = m
	}
	if 2*m*n*k < splitFLOPs {
		return span, 1, byRows
	}
	procs := par.Procs()
	perCore := max(1, min(piecesPerCore, span/(procs*minLatePiece))) // whole rounds: the cores share evenly
	parts := min(perCore*procs, span/splitAlign)
	if parts <= 1 {
		return span, 1, byRows
	}
	size = (span + parts - 1) / parts
	size = (size + splitAlign - 1) / splitAlign * splitAlign
	return size, (span + size - 1) / size, byRows
}

// piecesPerCore is the number of pieces a split product has per core (splitPieces). A product that
// starts when every other core slot is held (by queued host products, beside a kernel's) runs on the
// caller alone; with more pieces than cores, the slots that come free while it runs take over the pieces
// still to go (splitSgemm). In the language model's backward, 248 of its 451 products that started alone
// in 40 steps found a slot free when they ended: 12.5 ms a step of products whose second half could
// have run beside the first.
const piecesPerCore = 2

// minLatePiece is the fewest rows (or columns) of a piece beyond one per core: four pieces per core,
// 128 columns each at the language model's default sizes, made its step 10 % slower than two, of 256.
// The pieces come in whole rounds of one per core: three pieces of the reference layer's 768 rows on
// two cores left one core a third of the product idle (its step 5 % slower).
const minLatePiece = 256

// splitSgemm computes the validated product with m, n, k > 0 in the pieces splitPieces gives (more than
// one). The caller holds a core slot; with serial it runs every piece in turn, else each helper that joins
// takes one of the slots free when the product starts (the caller hands back those that no helper took)
// and the caller runs what no helper claimed. When no slot is free at the start, the caller runs the
// pieces in turn and looks for free slots before each: the pieces left then go to the helpers that take
// them as above. While goroutines that par.Occupy marks (evals started beside the script) hold cores,
// the pieces run in turn: a slot reserved here would hold up another eval's product. Who runs a piece
// never changes its bits.
func (l *library) splitSgemm(serial bool, size int, byRows bool, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	span := n
	if byRows {
		span = m
	}
	s := splits.Get().(*gemmSplit)
	s.l, s.transA, s.transB, s.byRows = l, transA, transB, byRows
	s.m, s.n, s.k, s.alpha, s.beta = m, n, k, alpha, beta
	s.a, s.b, s.c, s.lda, s.ldb, s.ldc = a, b, c, lda, ldb, ldc
	if serial || par.Occupied() > 0 { // evals under way on cores of their own: no slot to spare
		for lo := 0; lo < span; lo += size {
			s.run(lo, min(lo+size, span))
		}
	} else {
		for lo := 0; lo < span; lo += size {
			helpers := 0
			for helpers < (span-lo+size-1)/size-1 && tryAcquireCore() {
				helpers++
			}
			if helpers > 0 {
				s.off = lo
				s.reserved.Store(int32(helpers))
				par.ForGated(span-lo, size, s.join, leaveSplit, s.piece)
				for range s.reserved.Swap(0) {
					releaseCore()
				}
				break
			}
			s.run(lo, min(lo+size, span))
		}
	}
	s.l, s.a, s.b, s.c = nil, nil, nil, nil
	splits.Put(s)
}
