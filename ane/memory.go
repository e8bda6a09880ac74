package ane

import (
	"fmt"
	"sync"

	"github.com/anestar/anestar/mil"
)

// HeapMemory is a Memory backed by an ordinary Go allocation. Lock and Unlock only check that accesses
// are balanced; the bytes are always addressable until Release, which hands them back for reuse (a
// backend that pools surface memory between kernels) and makes every later access an error.
type HeapMemory struct {
	mu       sync.Mutex // guards locks and released against a concurrent Release
	buf      []byte     // the storage; nil once released
	locks    int        // accesses in progress
	released bool       // Release was called: Lock fails with ErrClosed
}

// NewHeapMemory returns a zeroed HeapMemory of n bytes.
func NewHeapMemory(n int) *HeapMemory { return &HeapMemory{buf: make([]byte, n)} }

// NewHeapMemoryOn returns a HeapMemory over buf, as it is (not cleared). The caller gives buf up: it
// must not touch it until Release returns it.
func NewHeapMemoryOn(buf []byte) *HeapMemory { return &HeapMemory{buf: buf} }

// Lock begins an access. It fails, wrapping ErrClosed, once the memory is released.
func (m *HeapMemory) Lock(readOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return fmt.Errorf("heap memory released: %w", ErrClosed)
	}
	m.locks++
	return nil
}

// Unlock ends an access begun by Lock.
func (m *HeapMemory) Unlock(readOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == 0 {
		return fmt.Errorf("heap memory: unlock without lock")
	}
	m.locks--
	return nil
}

// Bytes is the whole buffer (nil once released).
func (m *HeapMemory) Bytes() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.buf
}

// Locked reports how many accesses are in progress; it is zero between surface method calls.
func (m *HeapMemory) Locked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.locks
}

// Release ends the memory's life: later accesses fail with ErrClosed. It returns the bytes for reuse,
// or nil when they cannot be reused (an access is in progress, or the memory was released before);
// the memory holds no reference to returned bytes.
func (m *HeapMemory) Release() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return nil
	}
	m.released = true
	b := m.buf
	m.buf = nil
	if m.locks > 0 {
		return nil
	}
	return b
}

// NewHeapSurface returns a zeroed surface of tensor type t backed by a HeapMemory.
func NewHeapSurface(name string, t mil.Type) (*Surface, error) {
	if err := checkHeapType(name, t); err != nil {
		return nil, err
	}
	return NewSurface(name, t, NewHeapMemory(t.NumElements()*t.DType.Bits()/8))
}

// NewHeapSurfaceOn is NewHeapSurface over buf, which must hold exactly the tensor's bytes; buf is used
// as it is (not cleared) and given up as NewHeapMemoryOn says.
func NewHeapSurfaceOn(name string, t mil.Type, buf []byte) (*Surface, error) {
	if err := checkHeapType(name, t); err != nil {
		return nil, err
	}
	return NewSurface(name, t, NewHeapMemoryOn(buf))
}

// checkHeapType reports an error unless a heap surface can hold type t.
func checkHeapType(name string, t mil.Type) error {
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		return fmt.Errorf("surface %q: dtype %s: surfaces hold fp16 or fp32", name, t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("surface %q: type %s has a negative dim", name, t)
		}
	}
	return nil
}
