package cpu

import (
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/internal/par"
)

// When the BLAS library runs single-threaded (OpenBLAS by default here), Sgemm spreads a large product
// over GOMAXPROCS goroutines itself, in blocks of rows (or columns) of C, one library call each. The Go
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
	reserved       atomic.Int32     // core slots taken for helpers and not yet handed to one
	piece          func(lo, hi int) // s.run, bound once
	join           func() bool      // s.take, bound once
}

var splits = sync.Pool{New: func() any {
	s := new(gemmSplit)
	s.piece, s.join = s.run, s.take
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

// splitSgemm computes the validated product with m, n, k > 0 in pieces, one per core slot free when it
// starts (the caller holds one already; each helper that joins takes one of the others, and the caller
// hands back those that no helper took); it reports false, doing nothing, when the product is too
// small to split or no other slot is free.
func (l *library) splitSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) bool {
	if 2*m*n*k < splitFLOPs {
		return false
	}
	byRows := m >= n
	span := n
	if byRows {
		span = m
	}
	parts := 1 // the caller's own slot
	for parts < min(par.Procs(), span/splitAlign) && tryAcquireCore() {
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
	s := splits.Get().(*gemmSplit)
	s.l, s.transA, s.transB, s.byRows = l, transA, transB, byRows
	s.m, s.n, s.k, s.alpha, s.beta = m, n, k, alpha, beta
	s.a, s.b, s.c, s.lda, s.ldb, s.ldc = a, b, c, lda, ldb, ldc
	s.reserved.Store(int32(parts - 1))
	par.ForGated(span, size, s.join, leaveSplit, s.piece)
	for range s.reserved.Swap(0) {
		releaseCore()
	}
	s.l, s.a, s.b, s.c = nil, nil, nil, nil
	splits.Put(s)
	return true
}
