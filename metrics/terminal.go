package metrics

import "os"

// IsTerminal reports whether f looks like a terminal: a character device other than
// the null device. This uses only os.File.Stat, so it needs neither cgo nor an ioctl;
// the price is that other character devices (a serial line, say) count as terminals
// too, which for a progress line is harmless.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}
