package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// gcPercent is the collector's growth target (GOGC) of the command, unless the GOGC environment
// variable sets it; a process-wide setting, so it is made here and not by package builtins, which
// other programs embed. A training run's heap is mostly the float buffers of kernels and tensors,
// which hold no pointers and cost the collector nothing to mark, so collecting when the heap has grown
// by a quarter costs little time; the default (100) lets the garbage of many recompiles grow the heap
// to twice the live data. Measured on scripts/train_layer.star at the reference sizes, 100 steps: peak
// RSS 594 MB at GOGC=100, 457 MB at 50, 450 MB at 25, with the same step and compile times.
const gcPercent = 25

// gcFloor is the least the heap may grow between collections. A quarter of a small heap is a few
// megabytes: generating from stories260K (a live heap of about 20 MB) collected every few tokens,
// and its tokens/s halved under load against GOGC=100. Below gcFloor*100/gcPercent of live data (128
// MB) the growth target is raised to gcFloor; above it the floor changes nothing, nor the peak RSS of
// a training run.
const gcFloor = 32 << 20

// setGC sets the collector's policy (gcPercent, with gcFloor's headroom for small heaps) unless the
// GOGC environment variable sets one.
func setGC() {
	if os.Getenv("GOGC") != "" {
		return
	}
	g := newGCFloorHook()
	g.adjust()
	g.arm()
}

// newGCFloorHook returns a hook that has set nothing yet (the target is gcPercent's).
func newGCFloorHook() *gcFloorHook {
	return &gcFloorHook{percent: gcPercent, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
}

// gcFloorHook sets the growth target after every collection from the live heap it left
// (growthPercent). It lives in a finalizer: an object that only the hook references is collected by
// every cycle, its finalizer runs after it, and arms a new one.
type gcFloorHook struct {
	percent int              // the target set last
	sample  []metrics.Sample // the live heap's metric, read after each collection
}

// gcSentinel is the object whose finalizer marks a collection. It holds a pointer so that it is never
// placed in the tiny allocator's shared blocks, where a finalizer may not run.
type gcSentinel struct{ _ *int }

func (g *gcFloorHook) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		g.adjust()
		g.arm()
	})
}

func (g *gcFloorHook) adjust() {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	if p := growthPercent(g.sample[0].Value.Uint64()); p != g.percent {
		debug.SetGCPercent(p)
		g.percent = p
	}
}

// growthPercent is the GOGC that lets a heap of live bytes grow by gcPercent, or by gcFloor where that
// is more, rounded up to a multiple of gcPercent (so that a live heap that moves a little does not set
// a new target after every collection), and at most gcFloorPercent.
func growthPercent(live uint64) int {
	if live*gcPercent >= gcFloor*100 {
		return gcPercent
	}
	p := (gcFloor*100 + live - 1) / max(live, 1)
	return int(min(p+gcPercent-1, gcFloorPercent) / gcPercent * gcPercent)
}

// gcFloorPercent is the GOGC at which the runtime's least heap target (4 MB x GOGC/100, whatever the
// live heap) is gcFloor: a larger one would hold a tiny heap to more than the floor.
const gcFloorPercent = gcFloor / (4 << 20) * 100
