//go:build !unix

package memlimit

func resident() (rss, peak uint64, ok bool) { return 0, 0, false }
