//go:build unix

package proctime

import (
	"syscall"
	"time"
)

// cpu reads getrusage(RUSAGE_SELF): all threads, finished ones included.
func cpu() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
