package cpu

import (
	"runtime"

	"github.com/anestar/anestar/internal/par"
)

// parallelFor calls body over [0, n) split into contiguous ranges, one per
// available processor, when n is at least 2*grain; smaller work runs on the
// calling goroutine because handing out pieces would cost more than it
// saves. The pieces run on package par's helpers, which claim them as they
// come free. body must only touch the part of its data named by [lo, hi).
func parallelFor(n, grain int, body func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if w := n / max(grain, 1); w < workers {
		workers = w
	}
	if workers <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	par.For(n, (n+workers-1)/workers, body)
}
