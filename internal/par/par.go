// Package par runs the pieces of a loop on the calling goroutine and a fixed set of helper goroutines,
// started once, so that a steady-state loop starts no goroutines and allocates nothing.
//
// Pieces are claimed, not assigned: the caller and each helper take the next unclaimed piece until none
// is left, and the caller waits only for pieces that a helper has claimed and not yet finished. A helper
// that starts late (its thread not yet woken, or descheduled on a busy machine) finds the work done by
// the caller instead of holding it up; with pieces smaller than an even share, whoever runs faster
// takes more of them. Which goroutine runs a piece never changes what it computes: the pieces are
// fixed by the caller's n and size alone.
//
// Loops may nest (a piece may run a loop of its own): a goroutine waits only for pieces that running
// goroutines have claimed, so no wait can close a cycle.
//
// A helper that has run out of work polls for the next loop for a while (spinFor) before it blocks. A
// blocked helper's thread sleeps, and waking it took about 90 µs on the virtual machines measured:
// longer than most of the emulator's ops, which then ran on one core while the other woke up. (The
// caller's wait for a helper's last piece blocks: polling there measured slower.) The polling yields
// to other goroutines at every turn.
//
// Work outside the Go scheduler (a BLAS call on a thread of its own) holds cores that the helpers'
// threads would share with it, and a helper descheduled for the other thread's time slice holds up
// the loop whose piece it has claimed, by milliseconds. While SetBusy's function reports such work,
// loops are offered to that many fewer helpers, and idle helpers do not poll.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// job is one loop under way. Its pieces are [i*size, min((i+1)*size, n)) for i < pieces.
type job struct {
	fn     func(lo, hi int) // the loop body
	join   func() bool      // a helper's admission (nil: always), see ForGated
	leave  func()           // called by an admitted helper when it is done
	n      int              // the loop's range
	size   int              // elements per piece
	pieces int64            // number of pieces
	next   atomic.Int64     // the next piece to claim
	done   atomic.Int64     // pieces finished
	refs   atomic.Int32     // the caller and the helpers told of the job; the last one recycles it
	fin    chan struct{}    // receives once, when the last piece finishes
}

var (
	once    sync.Once
	work    chan *job // jobs offered to the helpers
	helpers int       // helper goroutines: GOMAXPROCS at the first loop, less one for the caller
	jobs    = sync.Pool{New: func() any { return &job{fin: make(chan struct{}, 1)} }}
)

func start() {
	helpers = runtime.GOMAXPROCS(0) - 1
	work = make(chan *job, 4*helpers+1)
	for range helpers {
		go func() {
			for {
				next().help()
			}
		}()
	}
}

// Procs is the number of goroutines a loop can run on, the caller included.
func Procs() int {
	once.Do(start)
	return helpers + 1
}

// For calls fn over [0, n) in pieces of size elements (the last may be shorter), on the caller and on
// the helpers that are free. fn must touch only the part of its data that [lo, hi) names. Without
// helpers (GOMAXPROCS 1) the caller runs the same pieces in turn.
func For(n, size int, fn func(lo, hi int)) { ForGated(n, size, nil, nil, fn) }

// ForGated is For where a helper first calls join, and takes pieces only when it reports true; it then
// calls leave when it has no more pieces to take. The caller takes pieces without asking. (cpu uses it
// to run a split product's pieces only on goroutines that hold a core slot.)
func ForGated(n, size int, join func() bool, leave func(), fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	size = max(size, 1)
	pieces := (n + size - 1) / size
	once.Do(start)
	if pieces == 1 || helpers == 0 {
		for lo := 0; lo < n; lo += size {
			fn(lo, min(lo+size, n))
		}
		return
	}
	j := jobs.Get().(*job)
	j.fn, j.join, j.leave, j.n, j.size, j.pieces = fn, join, leave, n, size, int64(pieces)
	j.next.Store(0)
	j.done.Store(0)
	offer := max(0, min(helpers-busy(), pieces-1))
	j.refs.Store(int32(1 + offer))
	for range offer {
		select {
		case work <- j:
		default: // every helper is busy with queued work: keep the piece for ourselves
			j.refs.Add(-1)
		}
	}
	j.run()
	// Take back our offers that no helper has picked up yet, so that a job no helper saw goes back to
	// the pool now, not when that helper comes. Another loop's offer found on the way is passed on
	// (or dropped, its owner running the pieces), never run here: this goroutine may hold resources
	// (cpu's core slots) that those pieces wait for.
	for range offer {
		select {
		case o := <-work:
			if o != j {
				select {
				case work <- o:
				default:
					o.release()
				}
			} else {
				o.release()
			}
			continue
		default:
		}
		break
	}
	<-j.fin
	j.release()
}

// spinFor is how long an idle helper polls for the next loop before it blocks: longer than most gaps
// between the emulator's parallel ops.
const spinFor = 200 * time.Microsecond

// busyFn, when set, is SetBusy's function.
var busyFn atomic.Pointer[func() int]

// SetBusy tells the package how many cores work outside the Go scheduler holds at any moment: n
// reports it (cpu: the foreign BLAS calls under way). It is called at every loop and at every turn of
// a polling helper: it must be cheap.
func SetBusy(n func() int) { busyFn.Store(&n) }

// occupied counts the goroutines between Occupy and its release.
var occupied atomic.Int32

// Occupy marks the calling goroutine as one that keeps a core busy with work of its own (a kernel's
// eval started beside the script's: ane's binding.start) until the returned function is called. Such
// goroutines count as held cores: loops are offered to that many fewer helpers, so that two evals
// under way on two cores run their loops on their own goroutines instead of taking turns at each
// other's pieces (a piece waited for on the other core holds up both).
func Occupy() (release func()) {
	occupied.Add(1)
	return func() { occupied.Add(-1) }
}

// Occupied is the number of goroutines that Occupy marks now.
func Occupied() int { return int(occupied.Load()) }

// busy is the number of cores held outside the scheduler, as SetBusy's function reports it, and by
// the goroutines that Occupy marks.
func busy() int {
	n := int(occupied.Load())
	if f := busyFn.Load(); f != nil {
		n += (*f)()
	}
	return n
}

// spinning reports whether a helper that started polling at t0 may poll on.
func spinning(t0 time.Time) bool {
	return busy() == 0 && time.Since(t0) < spinFor
}

// next returns the next job offered to the helpers: polled for while spinning allows, then waited for.
func next() *job {
	for t0 := time.Now(); spinning(t0); runtime.Gosched() {
		select {
		case j := <-work:
			return j
		default:
		}
	}
	return <-work
}

// help is a helper's part of j.
func (j *job) help() {
	if j.next.Load() < j.pieces && (j.join == nil || j.join()) {
		j.run()
		if j.leave != nil {
			j.leave()
		}
	}
	j.release()
}

// run claims and runs pieces until none is left.
func (j *job) run() {
	for {
		i := j.next.Add(1) - 1
		if i >= j.pieces {
			return
		}
		lo := int(i) * j.size
		j.fn(lo, min(lo+j.size, j.n))
		if j.done.Add(1) == j.pieces {
			j.fin <- struct{}{}
		}
	}
}

// release drops one reference to j; the last one recycles it, so that a helper that comes late never
// sees a job reused for another loop.
func (j *job) release() {
	if j.refs.Add(-1) == 0 {
		j.fn, j.join, j.leave = nil, nil, nil
		jobs.Put(j)
	}
}
