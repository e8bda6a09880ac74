package memlimit

import (
	"io"
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
	if left, limited := addressSpaceLeft(); limited {
		take(left)
	}
	return best, known
}

func addressSpaceLeft() (uint64, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur == ^uint64(0) {
		return 0, false
	}
	used, ok := MappedBytes()
	if !ok {
		return 0, false
	}
	if used >= rl.Cur {
		return 0, true
	}
	return rl.Cur - used, true
}

// MappedBytes returns the size of the process's address space (VmSize, from /proc/self/statm), and
// whether it could be read.
func MappedBytes() (uint64, bool) {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return 0, false
	}
	fields := strings.Fields(string(b)) // the first is the mapped size in pages
	if len(fields) == 0 {
		return 0, false
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
