package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/internal/par"
)

// A single-threaded BLAS call runs on an OS thread of its own, outside the Go scheduler's count: while
// it runs, the goroutine's processor is handed to other goroutines, which may start further BLAS calls.
// Unchecked, products from the emulator's parallel loops, split products and host math queued beside
// them pile up (four at once on two cores were seen), each sharing a core and its caches with the
// others. Every call of a single-threaded library therefore holds one of GOMAXPROCS core slots, shared
// process-wide, and a product is split only over the slots free when it starts.

var (
	coresOnce sync.Once
	cores     chan struct{} // one element per slot held
)

func initCores() { cores = make(chan struct{}, runtime.GOMAXPROCS(0)) }

// acquireCore waits for a free core slot.
func acquireCore() {
	coresOnce.Do(initCores)
	cores <- struct{}{}
}

// tryAcquireCore takes a free core slot if there is one.
func tryAcquireCore() bool {
	coresOnce.Do(initCores)
	select {
	case cores <- struct{}{}:
		return true
	default:
		return false
	}
}

// releaseCore frees a slot taken by acquireCore or tryAcquireCore.
func releaseCore() { <-cores }

// foreignCalls counts the calls of a foreign BLAS library under way, each on a thread of its own that
// needs a core: package par leaves those cores to them (par.SetBusy).
var foreignCalls atomic.Int32

func init() { par.SetBusy(func() int { return int(foreignCalls.Load()) }) }

// foreign returns f counted in foreignCalls.
func foreign(f sgemmFunc) sgemmFunc {
	return func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
		b []float32, ldb int, beta float32, c []float32, ldc int) {
		foreignCalls.Add(1)
		defer foreignCalls.Add(-1)
		f(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
}
