package cpu

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// readAddressSpaceLeft reports how many bytes the process may still map under its address-space limit
// (RLIMIT_AS, `ulimit -v`), and whether it has one.
func readAddressSpaceLeft() (uint64, bool) {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &rl) != nil || rl.Cur == ^uint64(0) {
		return 0, false
	}
	used, err := mappedBytes()
	if err != nil {
		return 0, false
	}
	if used >= rl.Cur {
		return 0, true
	}
	return rl.Cur - used, true
}

// mappedBytes is the size of the process's address space (VmSize), from /proc/self/statm.
func mappedBytes() (uint64, error) {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(b)) // the first is the mapped size in pages
	if len(fields) == 0 {
		return 0, fmt.Errorf("/proc/self/statm is empty")
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * uint64(os.Getpagesize()), nil
}
