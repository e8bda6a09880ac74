package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

func available() (uint64, bool) {
	var best uint64
	known := false
	take := func(n uint64) {
		if !known || n < best {
			best, known = n, true
		}
	}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		take((uint64(si.Totalram) + uint64(si.Totalswap)) * uint64(si.Unit))
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) == nil && rl.Cur != ^uint64(0) && rl.Cur > 0 {
		used := vmSize()
		if used < rl.Cur {
			take(rl.Cur - used)
		} else {
			take(0)
		}
	}
	return best, known
}

// vmSize returns the process's virtual memory size in bytes, from /proc/self/statm.
func vmSize() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
