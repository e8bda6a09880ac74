package private

import (
	"fmt"
	"sync/atomic"
)

// compiles counts this process's calls to Compile, successful or not; it is never below the number of
// models handed to the ANE compiler. The limit on in-memory compiles is per process, so the count is
// too: every Backend reports this one.
var compiles atomic.Int64

// The range in which a process's compiles start failing, as observed with the reference sources.
const (
	compileLimitLow  = 100
	compileLimitHigh = 119
)

// budgetHint is appended to a failed compile's error when the process has compiled enough models
// that the per-process limit is the likely cause; n counts the failed compile too.
func budgetHint(n int64) string {
	if n < compileLimitLow {
		return ""
	}
	return fmt.Sprintf(" (this process has compiled %d models; the ANE allows roughly %d-%d per process, "+
		"so save a checkpoint and restart the process)", n, compileLimitLow, compileLimitHigh)
}
