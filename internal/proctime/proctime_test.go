package proctime

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// spin keeps one goroutine busy for d of wall time.
func spin(d time.Duration) (n uint64) {
	for t0 := time.Now(); time.Since(t0) < d; {
		for range 1000 {
			n = n*6364136223846793005 + 1442695040888963407
		}
	}
	return n
}

// TestCPUCountsEveryThread: two goroutines spinning 200 ms each on threads of their own add about 400
// ms of CPU time where two cores are free (a quarter of one's at the least, on a loaded machine) and
// at most the wall time times the cores, plus the lag of a few threads' time (counted when they are
// rescheduled or the clock ticks).
func TestCPUCountsEveryThread(t *testing.T) {
	c0, ok := CPU()
	if !ok {
		t.Skip("CPU time is not known on this platform")
	}
	const d = 200 * time.Millisecond
	t0 := time.Now()
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			spin(d)
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	c1, _ := CPU()
	used := c1 - c0
	// On a machine other tests load the spinners share their cores: at least a quarter of one's time.
	if used < d/4 {
		t.Errorf("two goroutines spinning %v each used %v of CPU time", d, used)
	}
	if max := time.Duration(runtime.NumCPU())*wall + 50*time.Millisecond; used > max {
		t.Errorf("%v of CPU time in %v of wall time on %d cores", used, wall, runtime.NumCPU())
	}
}

// TestCPUNeverDecreases: readings in a row do not go back.
func TestCPUNeverDecreases(t *testing.T) {
	prev, ok := CPU()
	if !ok {
		t.Skip("CPU time is not known on this platform")
	}
	for range 1000 {
		c, _ := CPU()
		if c < prev {
			t.Fatalf("CPU time went from %v back to %v", prev, c)
		}
		prev = c
	}
}
