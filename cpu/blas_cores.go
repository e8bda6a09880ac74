package cpu

import (
	"runtime"
	"sync"
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
