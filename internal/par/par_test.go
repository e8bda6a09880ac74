package par

import (
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// visits runs For over n in pieces of size and reports how often each index was visited.
func visits(n, size int) []int32 {
	seen := make([]int32, n)
	For(n, size, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			atomic.AddInt32(&seen[i], 1)
		}
	})
	return seen
}

func TestForVisitsEachIndexOnce(t *testing.T) {
	for _, c := range []struct{ n, size int }{{0, 1}, {1, 1}, {5, 1}, {5, 2}, {5, 5}, {5, 9}, {1000, 7}, {1 << 16, 1 << 10}, {3, 0}} {
		for i, v := range visits(c.n, c.size) {
			if v != 1 {
				t.Fatalf("n %d size %d: index %d visited %d times", c.n, c.size, i, v)
			}
		}
	}
}

func TestForPiecesAreFixed(t *testing.T) {
	// The pieces depend on n and size alone, whoever runs them.
	var got [][2]int
	ch := make(chan [2]int, 16)
	For(10, 3, func(lo, hi int) { ch <- [2]int{lo, hi} })
	close(ch)
	for p := range ch {
		got = append(got, p)
	}
	want := map[[2]int]bool{{0, 3}: true, {3, 6}: true, {6, 9}: true, {9, 10}: true}
	if len(got) != len(want) {
		t.Fatalf("pieces %v, want %v", got, want)
	}
	for _, p := range got {
		if !want[p] {
			t.Fatalf("piece %v not among %v", p, want)
		}
	}
}

func TestForNests(t *testing.T) {
	const outer, inner = 8, 64
	var sum atomic.Int64
	For(outer, 1, func(lo, hi int) {
		for range hi - lo {
			For(inner, 4, func(lo, hi int) {
				For(hi-lo, 1, func(lo, hi int) { sum.Add(int64(hi - lo)) })
			})
		}
	})
	if got := sum.Load(); got != outer*inner {
		t.Fatalf("nested loops ran %d iterations, want %d", got, outer*inner)
	}
}

func TestForGatedRefusedRunsOnCaller(t *testing.T) {
	var joins, leaves atomic.Int32
	for i, v := range func() []int32 {
		seen := make([]int32, 100)
		ForGated(100, 10, func() bool { joins.Add(1); return false }, func() { leaves.Add(1) }, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				atomic.AddInt32(&seen[i], 1)
			}
		})
		return seen
	}() {
		if v != 1 {
			t.Fatalf("index %d visited %d times", i, v)
		}
	}
	if leaves.Load() != 0 {
		t.Fatalf("leave called %d times for helpers that were refused", leaves.Load())
	}
}

func TestForGatedLeavesOncePerJoin(t *testing.T) {
	for range 200 {
		var joins, leaves atomic.Int32
		ForGated(64, 1, func() bool { joins.Add(1); return true }, func() { leaves.Add(1) }, func(lo, hi int) {})
		// A helper may still be between join and leave when ForGated returns: wait for it.
		for joins.Load() != leaves.Load() {
			runtime.Gosched()
		}
	}
}

func TestForAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items")
	}
	buf := make([]float32, 1<<12)
	body := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			buf[i]++
		}
	}
	For(len(buf), 256, body)
	if n := testing.AllocsPerRun(100, func() { For(len(buf), 256, body) }); n != 0 {
		t.Fatalf("For allocates %v times per call", n)
	}
}

func TestBusyCoresStopPollingAndOffers(t *testing.T) {
	defer busyFn.Store(nil)
	now := time.Now()
	if !spinning(now) {
		t.Fatal("nothing busy, just started: spinning is false")
	}
	if spinning(now.Add(-2 * spinFor)) {
		t.Fatal("past spinFor: spinning is true")
	}
	var held atomic.Int32 // read by the helpers too
	SetBusy(func() int { return int(held.Load()) })
	if !spinning(now) {
		t.Fatal("no core busy: spinning is false")
	}
	held.Store(int32(Procs()))
	if spinning(now) {
		t.Fatal("cores busy: spinning is true")
	}
	// Every core held: the caller runs every piece itself, in order.
	var order []int
	For(100, 7, func(lo, hi int) { order = append(order, lo) })
	for i, lo := range order {
		if lo != 7*i {
			t.Fatalf("cores busy: pieces ran %v, not all on the caller in order", order)
		}
	}
	if len(order) != 15 {
		t.Fatalf("cores busy: %d pieces ran, want 15", len(order))
	}
	held.Store(0)
	if got := visits(1000, 7); slices.ContainsFunc(got, func(v int32) bool { return v != 1 }) {
		t.Fatalf("visits %v", got)
	}
}

// A goroutine that Occupy marks counts as a held core until its release: loops are offered to that
// many fewer helpers, and the pieces all run, on the caller when no helper is left.
func TestOccupy(t *testing.T) {
	base := busy()
	release := Occupy()
	if Occupied() != 1 || busy() != base+1 {
		t.Fatalf("occupied %d, busy %d after Occupy; want 1 and %d", Occupied(), busy(), base+1)
	}
	release2 := Occupy()
	var sum atomic.Int64
	For(1000, 10, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			sum.Add(int64(i))
		}
	})
	if sum.Load() != 999*1000/2 {
		t.Fatalf("sum %d, want %d", sum.Load(), 999*1000/2)
	}
	release2()
	release()
	if Occupied() != 0 || busy() != base {
		t.Fatalf("occupied %d, busy %d after the releases; want 0 and %d", Occupied(), busy(), base)
	}
}
