package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// TestGrowthPercent: the growth target is the least multiple of gcPercent that leaves gcFloor of
// headroom (or gcPercent's quarter where that is more), at most gcFloorPercent.
func TestGrowthPercent(t *testing.T) {
	for _, live := range []uint64{0, 1, 1 << 20, 3 << 20, 4 << 20, 5 << 20, 8 << 20, 20 << 20, 100 << 20, 128<<20 - 1, 128 << 20, 1 << 30, 1 << 40} {
		p := growthPercent(live)
		room := float64(live) * float64(p) / 100
		switch {
		case p%gcPercent != 0 || p < gcPercent || p > gcFloorPercent:
			t.Errorf("live %d: GOGC %d", live, p)
		case p < gcFloorPercent && room < gcFloor:
			t.Errorf("live %d: GOGC %d leaves %.0f bytes of growth, under the floor %d", live, p, room, gcFloor)
		case p > gcPercent && float64(live)*float64(p-gcPercent)/100 >= gcFloor:
			t.Errorf("live %d: GOGC %d, but %d leaves the floor too", live, p, p-gcPercent)
		}
	}
	if p := growthPercent(20 << 20); p != 175 { // 32/20 = 160 %, rounded up to a multiple of 25
		t.Errorf("live 20 MB: GOGC %d, want 175", p)
	}
	if p := growthPercent(1 << 30); p != gcPercent {
		t.Errorf("live 1 GB: GOGC %d, want %d", p, gcPercent)
	}
}

// TestGCFloorHook: after a collection the hook sets the target that the live heap it left calls for.
func TestGCFloorHook(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent)) // the test's process as it was, apart from the hook
	newGCFloorHook().arm()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the finalizer runs on a goroutine of its own
		metrics.Read(live)
		want := growthPercent(live[0].Value.Uint64())
		cur := debug.SetGCPercent(-1)
		debug.SetGCPercent(cur)
		if cur == want && want != gcPercent {
			return
		}
	}
	t.Errorf("GOGC is not the floor's after collections (live heap %d bytes, want %d)", live[0].Value.Uint64(), growthPercent(live[0].Value.Uint64()))
}
