package emulator

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Buffer recycling. Compiling allocates every buffer a kernel needs: op results, decoded weights,
// input values and surface memory. A script that recompiles its kernels after each weight update,
// closing the old ones first, would allocate, zero and page in the same sizes every time, and the Go
// heap would hold two generations of them until the collector ran. So Close hands a kernel's buffers
// to its backend's recycler, shelved by length, and the next compiles take them from there.
//
// Bounds: the recycler holds buffers of closed kernels only, and drops (leaves to the collector)
// those the compiles after a Close did not take: all of them at the first Eval of any of the
// backend's kernels (the compiles are over), and any that stayed on the shelf through recycleAge
// compiles. It holds them strongly: a collection between a Close and the next compiles (a script
// builds its programs in between) does not lose them.
//
// Safety: a closed kernel never touches its buffers again (Eval fails with ErrClosed, under the
// kernel's lock), and the memory of its surfaces is released (ane.HeapMemory.Release): a script that
// still holds a surface of a closed kernel gets ErrClosed from every access, never another kernel's
// data.
//
// Recycled float buffers are not cleared: every op writes all of its result before anything reads
// it, weights are decoded into their buffers and inputs are filled from their surfaces before the
// ops run (TestRecycledBuffersPoisoned runs the conformance suite with every handed-out buffer full
// of NaN). Surface memory is cleared: a new kernel's surfaces read zero.

// recycleAge is the number of compiles a shelved buffer waits for a taker before it is dropped.
const recycleAge = 16

// recycler is a backend's shelf of buffers from closed kernels.
type recycler struct {
	mu       sync.Mutex
	compiles int            // compiles finished, the recycler's clock
	floats   shelf[float32] // weights, constants and shared scratch
	bytes    shelf[byte]    // surface memory
	stocked  atomic.Bool    // the shelves hold something: the first Eval drops it
	poison   bool           // tests: hand out float buffers full of NaN
}

// newRecycler returns an empty recycler.
func newRecycler() *recycler { return &recycler{floats: shelf[float32]{}, bytes: shelf[byte]{}} }

// shelf holds buffers by length.
type shelf[T any] map[int][]shelved[T]

// shelved is a buffer and the compile count when it was shelved.
type shelved[T any] struct {
	buf []T
	at  int
}

// take removes and returns a buffer of length n, or nil.
func (s shelf[T]) take(n int) []T {
	l := s[n]
	if len(l) == 0 {
		return nil
	}
	b := l[len(l)-1].buf
	l[len(l)-1] = shelved[T]{}
	if len(l) == 1 {
		delete(s, n)
	} else {
		s[n] = l[:len(l)-1]
	}
	return b
}

// put shelves b at its full capacity.
func (s shelf[T]) put(b []T, at int) {
	if cap(b) == 0 {
		return
	}
	b = b[:cap(b)]
	s[len(b)] = append(s[len(b)], shelved[T]{buf: b, at: at})
}

// dropBefore removes the buffers shelved before clock at.
func (s shelf[T]) dropBefore(at int) {
	for n, l := range s {
		keep := l[:0]
		for _, e := range l {
			if e.at >= at {
				keep = append(keep, e)
			}
		}
		clear(l[len(keep):])
		if len(keep) == 0 {
			delete(s, n)
		} else {
			s[n] = keep
		}
	}
}

// size is the total length of the buffers on the shelf.
func (s shelf[T]) size() int {
	n := 0
	for size, l := range s {
		n += size * len(l)
	}
	return n
}

// floatsOf returns a float buffer of length n, recycled (holding old values) or new (zero).
func (r *recycler) floatsOf(n int) []float32 {
	if n <= 0 {
		return make([]float32, 0)
	}
	r.mu.Lock()
	b := r.floats.take(n)
	r.mu.Unlock()
	if b == nil {
		b = make([]float32, n)
	}
	r.spoil(b)
	return b
}

// spoil fills b with NaN in poisoned mode, so that tests catch a step that reads what it has not written.
func (r *recycler) spoil(b []float32) {
	if r.poison {
		nan := float32(math.NaN())
		for i := range b {
			b[i] = nan
		}
	}
}

// bytesOf returns a zeroed byte buffer of length n.
func (r *recycler) bytesOf(n int) []byte {
	if n <= 0 {
		return make([]byte, 0)
	}
	r.mu.Lock()
	b := r.bytes.take(n)
	r.mu.Unlock()
	if b == nil {
		return make([]byte, n)
	}
	parallel(n, clearGrain, func(lo, hi int) { clear(b[lo:hi]) })
	return b
}

// clearGrain is the bytes one piece of a parallel clear zeroes.
const clearGrain = 1 << 20

// give shelves the buffers of a closed kernel.
func (r *recycler) give(floats [][]float32, bytes [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range floats {
		r.floats.put(b, r.compiles)
	}
	for _, b := range bytes {
		r.bytes.put(b, r.compiles)
	}
	r.stocked.Store(len(r.floats)+len(r.bytes) > 0)
}

// compiled advances the clock after a compile and drops the buffers no compile took in recycleAge.
func (r *recycler) compiled() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compiles++
	r.floats.dropBefore(r.compiles - recycleAge)
	r.bytes.dropBefore(r.compiles - recycleAge)
	r.stocked.Store(len(r.floats)+len(r.bytes) > 0)
}

// evaluating drops every shelved buffer: a kernel runs, so the compiles that could take them are over.
// It is cheap when the shelves are empty and allocates nothing.
func (r *recycler) evaluating() {
	if !r.stocked.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.floats)
	clear(r.bytes)
	r.stocked.Store(false)
}

// held is the number of bytes on the shelves.
func (r *recycler) held() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return 4*r.floats.size() + r.bytes.size()
}

// newSurface makes a zeroed surface of type t for the kernel being compiled, on recycled memory.
func (c *compiler) newSurface(name string, t mil.Type) (*ane.Surface, error) {
	s, mem, err := c.rec.newSurface(name, t)
	if err != nil {
		return nil, err
	}
	c.mems = append(c.mems, mem)
	return s, nil
}

// newSurface makes a zeroed surface of type t on recycled memory and returns it with its memory.
func (r *recycler) newSurface(name string, t mil.Type) (*ane.Surface, *ane.HeapMemory, error) {
	n := max(t.NumElements(), 0) * (t.DType.Bits() / 8)
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		n = 0
	}
	s, err := ane.NewHeapSurfaceOn(name, t, r.bytesOf(n))
	if err != nil {
		return nil, nil, err
	}
	return s, s.Memory().(*ane.HeapMemory), nil
}

// newFloats returns a float buffer of length n owned by the kernel being compiled.
func (c *compiler) newFloats(n int) []float32 {
	b := c.rec.floatsOf(n)
	c.owned = append(c.owned, b)
	return b
}
