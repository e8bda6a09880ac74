// Package proctime reads the CPU time the process has used: every thread's, the Go scheduler's and
// those outside it (a foreign BLAS call's) alike. Over a span, CPU time over wall time is how many
// cores were busy on average: what tells a step bound by serial work from one bound by its cores.
package proctime

import "time"

// CPU returns the user and system CPU time the process has used since it started, and false where
// the platform does not say (then 0).
func CPU() (time.Duration, bool) { return cpu() }
