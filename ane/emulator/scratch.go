package emulator

import "sync"

// Shared scratch. Apart from its weights and constants, everything a kernel's Eval computes lives only
// during that Eval: the input values are read from the surfaces at its start, the outputs written to
// the surfaces at its end, and the values in between are planned into buffers (plan.go). So the
// kernels of one backend share those buffers: their Evals (and compiles and Closes) take turns, under
// the arena's lock, and a kernel compiled after others carves its buffers out of the arena's, each
// part of an arena buffer at most once per kernel, before it allocates new ones. A backend holding several kernels (the six of a training
// step) then needs about the scratch of its largest kernel rather than the sum of all. A buffer goes
// to the recycler when the last kernel using it is closed.

// arena is a backend's shared scratch buffers and the lock its kernels take turns under.
type arena struct {
	mu   sync.Mutex // held by Compile, Eval and Close
	rec  *recycler  // where new buffers come from and unused ones go
	bufs []*scratch // the buffers in use by at least one kernel
}

// scratch is one shared buffer.
type scratch struct {
	data  []float32 // at full capacity
	users int       // open kernels using it
}

// newArena returns an empty arena over a new recycler.
func newArena() *arena { return &arena{rec: newRecycler()} }

// newScratch returns n elements of shared scratch for the kernel being compiled, carved from the arena
// buffer whose room left (what this kernel has not carved from it yet) fits them best, or from a new
// buffer when none has room. The caller holds c.ar.mu.
func (c *compiler) newScratch(n int) []float32 {
	var best *scratch
	for _, s := range c.ar.bufs {
		room := cap(s.data) - c.fill[s]
		if room >= n && (best == nil || room < cap(best.data)-c.fill[best]) {
			best = s
		}
	}
	if best == nil {
		best = &scratch{data: c.ar.rec.floatsOf(n)}
		c.ar.bufs = append(c.ar.bufs, best)
	}
	at, ok := c.fill[best]
	if !ok {
		best.users++
		c.scratch = append(c.scratch, best)
	}
	c.fill[best] = at + n
	d := best.data[at : at+n : at+n]
	c.ar.rec.spoil(d)
	return d
}

// release ends a closed (or failed) kernel's use of its scratch buffers; those no kernel uses any
// more go to the recycler. The caller holds a.mu.
func (a *arena) release(used []*scratch) {
	var free [][]float32
	for _, s := range used {
		if s.users--; s.users == 0 {
			free = append(free, s.data)
		}
	}
	if len(free) == 0 {
		return
	}
	keep := a.bufs[:0]
	for _, s := range a.bufs {
		if s.users > 0 {
			keep = append(keep, s)
		}
	}
	clear(a.bufs[len(keep):])
	a.bufs = keep
	a.rec.give(free, nil)
}

// scratchBytes is the size of the arena's buffers in bytes.
func (a *arena) scratchBytes() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, s := range a.bufs {
		n += 4 * cap(s.data)
	}
	return n
}
