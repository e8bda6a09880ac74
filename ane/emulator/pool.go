package emulator

import (
	"runtime"
	"sync"
)

// The emulator spreads loops over a fixed set of worker goroutines, started once, so that a steady-state
// Eval starts no goroutines and allocates nothing. Work runs on at most GOMAXPROCS goroutines (the
// caller included); pieces may call the BLAS (single-threaded products, cpu.SgemmSerial).

// chunk is one piece of a parallel loop.
type chunk struct {
	fn     func(lo, hi int) // the loop body over [lo, hi)
	lo, hi int              // the range
	done   *sync.WaitGroup  // signalled when fn returns
}

var (
	poolOnce  sync.Once
	poolWork  chan chunk
	poolSize  int       // worker goroutines, not counting the caller
	waitGroup sync.Pool // *sync.WaitGroup, reused so that parallel does not allocate
)

func startPool() {
	poolSize = runtime.GOMAXPROCS(0) - 1
	poolWork = make(chan chunk, 4*poolSize+1)
	for range poolSize {
		go func() {
			for c := range poolWork {
				c.fn(c.lo, c.hi)
				c.done.Done()
			}
		}()
	}
	waitGroup.New = func() any { return new(sync.WaitGroup) }
}

// parallel calls fn over [0, n) in contiguous pieces, using the worker pool when n is at least 2*grain.
// fn must touch only the part of its data that [lo, hi) names.
func parallel(n, grain int, fn func(lo, hi int)) {
	poolOnce.Do(startPool)
	parts := min(poolSize+1, n/max(grain, 1))
	if parts <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	wg := waitGroup.Get().(*sync.WaitGroup)
	size := (n + parts - 1) / parts
	for lo := size; lo < n; lo += size {
		wg.Add(1)
		poolWork <- chunk{fn: fn, lo: lo, hi: min(lo+size, n), done: wg}
	}
	fn(0, min(size, n))
	wg.Wait()
	waitGroup.Put(wg)
}
