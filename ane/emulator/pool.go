package emulator

import "github.com/anestar/anestar/internal/par"

// The emulator spreads loops over par's fixed set of helper goroutines, started once, so that a
// steady-state Eval starts no goroutines and allocates nothing. Work runs on at most GOMAXPROCS
// goroutines (the caller included); pieces may call the BLAS (single-threaded products,
// cpu.SgemmF32Serial and cpu.SgemmF16Serial).

// piecesPerProc is how many pieces a loop is cut into per goroutine that can run it: pieces are
// claimed as goroutines come free (package par), so a helper that starts late, or a core that the
// machine's other work slows, leaves less of the loop waiting on it.
const piecesPerProc = 2

// parallel calls fn over [0, n) in contiguous pieces, using the helpers when n is at least 2*grain.
// fn must touch only the part of its data that [lo, hi) names.
func parallel(n, grain int, fn func(lo, hi int)) {
	parts := min(piecesPerProc*par.Procs(), n/max(grain, 1))
	if parts <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	par.For(n, (n+parts-1)/parts, fn)
}
