package cpu

import (
	"runtime"
	"sync"
)

// parallelFor calls body over [0, n) split into contiguous ranges, one per
// available processor, when n is at least 2*grain; smaller work runs on the
// calling goroutine because starting goroutines would cost more than it
// saves. body must only touch the part of its data named by [lo, hi).
func parallelFor(n, grain int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if w := n / grain; w < workers {
		workers = w
	}
	if workers <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	chunk := (n + workers - 1) / workers
	for lo := chunk; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	body(0, min(chunk, n))
	wg.Wait()
}
