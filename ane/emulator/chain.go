package emulator

import (
	"unsafe"
)

// Elementwise chains. A run of consecutive elementwise steps over results of one size (the SwiGLU's
// sigmoid, products and sums, forward and backward; RoPE's products, sums and the concat that
// interleaves their halves) runs as one step, piece by piece: each piece goes through every op of the
// chain while its values are still in cache, where separate steps each stream their whole operands
// from memory. A step's work is cut into units (single elements for an op over dense operands, rows
// for one that reads strided views or concatenates rows), and the steps of a chain have the same
// number of units: piece i of every op is its units [lo, hi). Every element meets the same ops in the
// same order, so the bits are those of the separate steps, provided no op of the chain reads or writes
// memory that another op of the chain writes in another unit: chainable checks that on the buffers
// themselves (the planner reuses buffers, and views share them).

// piecewise is a step's work over any range [lo, hi) of its n units.
type piecewise struct {
	n     int              // units
	fine  bool             // units are single elements over dense operands: any multiple of them is a unit too
	fn    func(lo, hi int) // computes (and rounds, under FP16) the result's units [lo, hi)
	out   access           // the result
	ins   []access         // the operands
	scale int              // in a chain: fn's units per chain unit (fine steps); 1 otherwise
}

// access is the memory an operand reads or a result is written to: with per > 0, unit i of the step
// is data[i*per : (i+1)*per]; with per 0, any of data, in any unit.
type access struct {
	data []float32
	per  int
}

// flat is the access of a dense operand or result read or written element by element.
func flat(data []float32) access { return access{data, 1} }

// chainPiece is the elements a chain computes per op before the next: its values for ten ops or so
// stay in L2.
const chainPiece = 4096

// maxChain is the most steps one chain joins. Each step joining a chain is checked against every step
// already in it, so an unbounded chain costs the square of its length to plan (planning took 5.4 s of
// compiling 40,000 relus, BenchmarkCompileElementwiseChain); the shipped kernels' chains are 3 to 12 steps, and a piece's values stay in cache for
// about ten ops, so longer chains gain nothing.
const maxChain = 32

// chainSteps returns steps with each run of at least two chainable steps (steps that compute nothing
// may sit between them, and at most maxChain in one) replaced by one step that runs them piece by piece.
func chainSteps(steps []step) []step {
	var out []step
	var run []*piecewise
	var runSteps, idle []step // the run's steps, and steps without work met inside it
	flush := func() {
		if len(run) >= 2 {
			out = append(out, chainStep(runSteps, run))
		} else {
			out = append(out, runSteps...)
		}
		out = append(out, idle...)
		run, runSteps, idle = run[:0], runSteps[:0], idle[:0]
	}
	for _, s := range steps {
		switch {
		case s.run == nil && len(s.round) == 0 && len(run) > 0:
			idle = append(idle, s)
			continue
		case s.pw == nil || len(s.round) != 0:
			flush()
			out = append(out, s)
			continue
		}
		if len(run) >= maxChain {
			flush()
		}
		if p := joined(run, s.pw); p != nil {
			run, runSteps = append(run, p), append(runSteps, s)
			continue
		}
		flush()
		p := *s.pw
		p.scale = 1
		run, runSteps = append(run, &p), append(runSteps, s)
	}
	flush()
	return out
}

// chainStep is the single step of run, chainable steps in order (their work as joined gave it).
func chainStep(steps []step, run []*piecewise) step {
	s := step{op: steps[0].op, result: steps[len(steps)-1].result, fused: true, chain: len(steps)}
	per := 0 // elements of the chain's largest result per unit, for the piece size
	for i, r := range steps {
		s.outs = append(s.outs, r.outs...)
		s.flops += r.flops
		per = max(per, run[i].out.per*run[i].scale)
	}
	n := run[0].n / run[0].scale
	step := max(1, chainPiece/max(per, 1))
	fns := make([]func(lo, hi int), len(run))
	for i, p := range run {
		fns[i] = p.fn
		if k := p.scale; k > 1 {
			f := p.fn
			fns[i] = func(lo, hi int) { f(lo*k, hi*k) }
		}
	}
	body := func(lo, hi int) {
		for a := lo; a < hi; a += step {
			b := min(a+step, hi)
			for _, f := range fns {
				f(a, b)
			}
		}
	}
	s.run = func() error { parallel(n, 2*step, body); return nil }
	return s
}

// joined returns p as a step of run (scaled to its units), or nil when it cannot join it: run is
// empty, p does not cut into run's units, or an op of the two reads or writes memory that the other
// writes, other than in the same unit.
func joined(run []*piecewise, p *piecewise) *piecewise {
	if len(run) == 0 {
		return nil
	}
	q := *p
	q.scale = 1
	n := run[0].n / run[0].scale // the chain's units
	switch {
	case q.n == n:
	case q.fine && q.n%n == 0:
		q.scale = q.n / n
	case run[0].fine && n%q.n == 0 && allFine(run):
		// p's units are coarser: the chain takes them, its fine steps several elements a unit
		k := n / q.n
		for _, r := range run {
			r.scale *= k
		}
		if !chainable(run, &q) {
			for _, r := range run {
				r.scale /= k
			}
			return nil
		}
		return &q
	default:
		return nil
	}
	if !chainable(run, &q) {
		return nil
	}
	return &q
}

// allFine reports whether every step of run works element by element.
func allFine(run []*piecewise) bool {
	for _, r := range run {
		if !r.fine {
			return false
		}
	}
	return true
}

// chainable reports whether no op of run and p reads or writes memory that the other writes, other
// than in the same unit.
func chainable(run []*piecewise, p *piecewise) bool {
	pw := p.out.scaled(p.scale)
	for _, r := range run {
		rw := r.out.scaled(r.scale)
		if !sameUnit(pw, rw) {
			return false
		}
		for _, in := range r.ins {
			if !sameUnit(pw, in.scaled(r.scale)) {
				return false
			}
		}
		for _, in := range p.ins {
			if !sameUnit(rw, in.scaled(p.scale)) {
				return false
			}
		}
	}
	return true
}

// scaled is a's access with k of its units to one.
func (a access) scaled(k int) access {
	a.per *= k
	return a
}

// sameUnit reports whether w, a result, and a either share no memory or are the same elements in the
// same units.
func sameUnit(w, a access) bool {
	if len(w.data) == 0 || len(a.data) == 0 {
		return true
	}
	w0, a0 := uintptr(unsafe.Pointer(unsafe.SliceData(w.data))), uintptr(unsafe.Pointer(unsafe.SliceData(a.data)))
	if w0+4*uintptr(len(w.data)) <= a0 || a0+4*uintptr(len(a.data)) <= w0 {
		return true
	}
	return w.per > 0 && w.per == a.per && w0 == a0
}
