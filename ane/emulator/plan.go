package emulator

import (
	"math"
	"unsafe"
)

// Memory plan. Op results get their buffers from a free list at compile time: a buffer whose values are
// no longer read (every tensor in it, views included, has had its last use) goes back to the list and
// the next result that fits reuses it. Inputs, constants, outputs and the parts of an output concat
// (or of a concat an output cast reads) keep buffers of their own for the whole Eval. This bounds a kernel's memory by the values live
// at once rather than by all values of the program. New buffers are the backend's shared scratch
// (scratch.go); neither they nor reused ones are cleared, since every op writes all of its result.

// buffer is one planned allocation.
type buffer struct {
	data []float32 // the storage, at its full capacity
	last int       // index in main's ops of the last op that reads a value stored here
}

// forever is the last use of values read after the ops (outputs).
const forever = math.MaxInt

// planner hands out and takes back buffers as compilation walks the ops.
type planner struct {
	lastUse map[string]int        // value name -> index of the last op reading it (liveness)
	slots   map[string]concatSlot // values computed in their concat's buffer (concat_target.go)
	owners  map[string][]float32  // the buffers of those concats, once the first part took it
	live    []*buffer             // buffers holding values still to be read
	free    []*buffer             // buffers available for reuse
	take    func(n int) []float32 // a new buffer of n elements
	spoil   func([]float32)       // prepares a reused buffer (tests fill it with NaN)
}

// newPlanner returns a planner over the last uses the liveness pass computed (nodes.go); take makes
// new buffers, spoil prepares reused ones.
func newPlanner(lastUse map[string]int, take func(n int) []float32, spoil func([]float32)) *planner {
	return &planner{lastUse: lastUse, take: take, spoil: spoil}
}

// release returns the buffers whose values are all read by the time op index i runs.
func (p *planner) release(i int) {
	keep := p.live[:0]
	for _, b := range p.live {
		if b.last < i {
			p.free = append(p.free, b)
		} else {
			keep = append(keep, b)
		}
	}
	clear(p.live[len(keep):])
	p.live = keep
}

// alloc returns n elements for value name, holding anything: the smallest free buffer that holds
// them, or a new one; for a part of a concat target its window of the concat's buffer, and for the
// concat that buffer.
func (p *planner) alloc(name string, n int) []float32 {
	if s, ok := p.slots[name]; ok && s.off+n <= s.total {
		return p.owner(s)[s.off : s.off+n]
	}
	if b, ok := p.owners[name]; ok && len(b) == n {
		return b
	}
	return p.fresh(name, n).data[:n]
}

// owner returns the buffer of slot s's concat, taken (live until its last use, and at least until the
// concat) when its first part asks.
func (p *planner) owner(s concatSlot) []float32 {
	if b, ok := p.owners[s.owner]; ok {
		return b
	}
	if p.owners == nil {
		p.owners = map[string][]float32{}
	}
	b := p.fresh(s.owner, s.total)
	b.last = max(b.last, s.until)
	p.owners[s.owner] = b.data[:s.total]
	return p.owners[s.owner]
}

// fresh returns a live buffer of at least n elements for value name, from the free list or new, that
// lives until name's last use.
func (p *planner) fresh(name string, n int) *buffer {
	best := -1
	for i, b := range p.free {
		if cap(b.data) >= n && (best < 0 || cap(b.data) < cap(p.free[best].data)) {
			best = i
		}
	}
	var b *buffer
	if best >= 0 {
		b = p.free[best]
		p.free = append(p.free[:best], p.free[best+1:]...)
		p.spoil(b.data[:n])
	} else {
		b = &buffer{data: p.take(n)}
	}
	b.last = p.last(name)
	p.live = append(p.live, b)
	return b
}

// last is the last use of value name, -1 when nothing reads it.
func (p *planner) last(name string) int {
	if l, ok := p.lastUse[name]; ok {
		return l
	}
	return -1
}

// view records that value name is stored in data (a view of another value, or its own buffer): a
// planned buffer holding data lives at least until name's last use.
func (p *planner) view(name string, data []float32) {
	if len(data) == 0 {
		return
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	for _, b := range p.live {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(b.data)))
		if at >= lo && at < lo+uintptr(cap(b.data))*4 {
			b.last = max(b.last, p.last(name))
			return
		}
	}
}
