package cpu

import (
	"runtime"
	"sync"
)

// When the BLAS library runs single-threaded (OpenBLAS by default here), Sgemm spreads a large product
// over GOMAXPROCS goroutines itself, in blocks of rows (or columns) of C, one library call each. The Go
// scheduler then shares the cores between those calls and everything else the program runs (the
// emulator's loops, queued host math), where a multi-threaded BLAS would start its own threads, whose
// spinning waits compete with them. Workers are started once, so a split product allocates nothing.

// splitFLOPs is the size (2*m*n*k) from which a product is split.
const splitFLOPs = 1 << 23

// splitAlign is the granularity of a piece's rows or columns (a multiple of the kernels' unrolling).
const splitAlign = 16

// gemmPiece is one block of a split product.
type gemmPiece struct {
	l              *library
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	done           *sync.WaitGroup
}

var (
	gemmOnce  sync.Once
	gemmWork  chan gemmPiece
	gemmProcs int       // goroutines a product is split over, the caller included
	gemmWGs   sync.Pool // *sync.WaitGroup
)

func startGemmWorkers() {
	gemmProcs = runtime.GOMAXPROCS(0)
	gemmWork = make(chan gemmPiece, 4*gemmProcs)
	for range gemmProcs - 1 {
		go func() {
			for p := range gemmWork {
				p.l.sgemm(p.transA, p.transB, p.m, p.n, p.k, p.alpha, p.a, p.lda, p.b, p.ldb, p.beta, p.c, p.ldc)
				releaseCore()
				p.done.Done()
			}
		}()
	}
	gemmWGs.New = func() any { return new(sync.WaitGroup) }
}

// splitSgemm computes the validated product with m, n, k > 0 in pieces over the workers, one per core
// slot free (the caller holds one already, and each worker frees the one taken for its piece); it
// reports false, doing nothing, when the product is too small to split or no other slot is free.
func (l *library) splitSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if 2*m*n*k < splitFLOPs {
		return false
	}
	gemmOnce.Do(startGemmWorkers)
	byRows := m >= n
	span := n
	if byRows {
		span = m
	}
	parts := 1 // the caller's own slot
	for parts < min(gemmProcs, span/splitAlign) && tryAcquireCore() {
		parts++
	}
	if parts <= 1 {
		return false
	}
	size := (span + parts - 1) / parts
	size = (size + splitAlign - 1) / splitAlign * splitAlign
	for pieces := (span + size - 1) / size; parts > pieces; parts-- {
		releaseCore() // rounding the pieces up to splitAlign left fewer than the slots taken
	}
	wg := gemmWGs.Get().(*sync.WaitGroup)
	var first gemmPiece
	for i, lo := 0, 0; lo < span; i, lo = i+1, lo+size {
		hi := min(lo+size, span)
		p := gemmPiece{l: l, transA: transA, transB: transB, m: m, n: n, k: k, alpha: alpha, beta: beta,
			a: a, b: b, c: c, lda: lda, ldb: ldb, ldc: ldc, done: wg}
		if byRows { // rows [lo, hi) of op(A) and C
			p.m = hi - lo
			if transA {
				p.a = a[lo:]
			} else {
				p.a = a[lo*lda:]
			}
			p.c = c[lo*ldc:]
		} else { // columns [lo, hi) of op(B) and C
			p.n = hi - lo
			if transB {
				p.b = b[lo*ldb:]
			} else {
				p.b = b[lo:]
			}
			p.c = c[lo:]
		}
		if i == 0 {
			first = p
			continue
		}
		wg.Add(1)
		gemmWork <- p
	}
	l.sgemm(first.transA, first.transB, first.m, first.n, first.k, first.alpha, first.a, first.lda,
		first.b, first.ldb, first.beta, first.c, first.ldc)
	wg.Wait()
	gemmWGs.Put(wg)
	return true
}
