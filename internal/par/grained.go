package par

import "runtime"

// Grained calls body over [0, n) split into contiguous ranges, one per available processor, when n is
// at least 2*grain; smaller work runs on the calling goroutine because handing out pieces would cost
// more than it saves. The pieces run on the helpers of For, which claim them as they come free. body
// must only touch the part of its data named by [lo, hi). (The host math of nn and optim splits its
// loops with it.)
func Grained(n, grain int, body func(lo, hi int)) {
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
	For(n, (n+workers-1)/workers, body)
}
