package emulator

import (
	"unsafe"
)

// Elementwise chains. A run of consecutive elementwise steps over results of one size (the SwiGLU's
// sigmoid, products and sums, forward and backward) runs as one step, piece by piece: each piece of
// chainPiece elements goes through every op of the chain while its values are still in cache, where
// separate steps each stream their whole operands from memory. Every element meets the same ops in
// the same order, so the bits are those of the separate steps, provided no op of the chain reads or
// writes an element of memory that another op of the chain writes at a different index: chainable
// checks that on the buffers themselves (the planner reuses buffers, and views share them).

// piecewise is an elementwise step's work over any range [lo, hi) of its n result elements.
type piecewise struct {
	n   int              // result elements
	fn  func(lo, hi int) // computes (and rounds, under FP16) result elements [lo, hi)
	out []float32        // the result: element i at out[i]
	ins []access         // the operands
}

// access is the memory an operand reads: flat when result element i reads data[i] (else any of it).
type access struct {
	data []float32
	flat bool
}

// chainPiece is the elements a chain computes per op before the next: its values for ten ops or so
// stay in L2.
const chainPiece = 4096

// chainGrain is the smallest share of a chain the helpers take.
const chainGrain = 2 * chainPiece

// chainSteps returns steps with each run of at least two chainable steps (steps that compute nothing
// may sit between them) replaced by one step that runs them piece by piece.
func chainSteps(steps []step) []step {
	var out, run []step
	var idle []step // steps without work met inside the current run
	flush := func() {
		if len(run) >= 2 {
			out = append(out, chainStep(run))
		} else {
			out = append(out, run...)
		}
		out = append(out, idle...)
		run, idle = run[:0], idle[:0]
	}
	for _, s := range steps {
		switch {
		case s.run == nil && len(s.round) == 0 && len(run) > 0:
			idle = append(idle, s)
		case s.pw != nil && len(s.round) == 0 && (len(run) == 0 || chainable(run, s)):
			run = append(run, s)
		default:
			flush()
			if s.pw != nil && len(s.round) == 0 {
				run = append(run, s)
			} else {
				out = append(out, s)
			}
		}
	}
	flush()
	return out
}

// chainStep is the single step of run, chainable steps in order.
func chainStep(run []step) step {
	fns := make([]func(lo, hi int), len(run))
	s := step{op: run[0].op, result: run[len(run)-1].result, fused: true, chain: len(run)}
	for i, r := range run {
		fns[i] = r.pw.fn
		s.outs = append(s.outs, r.outs...)
		s.flops += r.flops
	}
	n := run[0].pw.n
	body := func(lo, hi int) {
		for a := lo; a < hi; a += chainPiece {
			b := min(a+chainPiece, hi)
			for _, f := range fns {
				f(a, b)
			}
		}
	}
	s.run = func() error { parallel(n, chainGrain, body); return nil }
	return s
}

// chainable reports whether s can join run: the same result size, and no op of the two reading or
// writing memory that one of them writes, except element i at result index i.
func chainable(run []step, s step) bool {
	p := s.pw
	if p.n != run[0].pw.n {
		return false
	}
	for _, r := range run {
		q := r.pw
		// what s writes against what r writes and reads, what r writes against what s reads
		if !sameIndex(p.out, true, q.out, true) {
			return false
		}
		for _, in := range q.ins {
			if !sameIndex(p.out, true, in.data, in.flat) {
				return false
			}
		}
		for _, in := range p.ins {
			if !sameIndex(q.out, true, in.data, in.flat) {
				return false
			}
		}
	}
	return true
}

// sameIndex reports whether w, written at result index i (flat), and a, read or written as flat
// says, either share no memory or are the same elements at the same indices.
func sameIndex(w []float32, wflat bool, a []float32, aflat bool) bool {
	if len(w) == 0 || len(a) == 0 {
		return true
	}
	w0, a0 := uintptr(unsafe.Pointer(unsafe.SliceData(w))), uintptr(unsafe.Pointer(unsafe.SliceData(a)))
	if w0+4*uintptr(len(w)) <= a0 || a0+4*uintptr(len(a)) <= w0 {
		return true
	}
	return wflat && aflat && w0 == a0
}
