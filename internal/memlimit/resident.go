package memlimit

// Resident returns the bytes of memory the process holds now (its resident set) and the most it has
// held since it started (its peak resident set, what `/usr/bin/time -v` reports), and whether they
// could be read. On Linux both come from /proc/self/status (VmRSS, VmHWM); elsewhere only the peak
// is known (getrusage) and rss is the peak too.
func Resident() (rss, peak uint64, ok bool) { return resident() }
