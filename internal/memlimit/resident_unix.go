//go:build unix && !linux

package memlimit

import (
	"runtime"
	"syscall"
)

func resident() (rss, peak uint64, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || ru.Maxrss <= 0 {
		return 0, 0, false
	}
	peak = uint64(ru.Maxrss)
	if runtime.GOOS != "darwin" { // the BSDs count kilobytes; darwin counts bytes
		peak <<= 10
	}
	return peak, peak, true
}
