package memlimit

import (
	"runtime"
	"testing"
)

// TestResident: the resident set is read where the system tells it, the peak is never below it, and
// touching 64 MiB raises the peak by about that much.
func TestResident(t *testing.T) {
	rss, peak, ok := Resident()
	if !ok {
		if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
			t.Fatal("Resident: not known")
		}
		t.Skip("not known here")
	}
	if rss == 0 || peak < rss {
		t.Fatalf("rss %d, peak %d", rss, peak)
	}
	const n = 64 << 20
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	_, after, _ := Resident()
	runtime.KeepAlive(b)
	if after < peak || (after < rss+n*9/10) {
		t.Errorf("after touching %d bytes: peak %d, was rss %d and peak %d", n, after, rss, peak)
	}
}
