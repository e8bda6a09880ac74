package ane

import (
	"fmt"
	"sync/atomic"

	"github.com/anestar/anestar/mil"
)

// HeapMemory is a Memory backed by an ordinary Go allocation. Lock and Unlock only check that accesses
// are balanced; the bytes are always addressable.
type HeapMemory struct {
	buf   []byte       // the storage
	locks atomic.Int64 // accesses in progress
}

// NewHeapMemory returns a zeroed HeapMemory of n bytes.
func NewHeapMemory(n int) *HeapMemory { return &HeapMemory{buf: make([]byte, n)} }

// Lock begins an access.
func (m *HeapMemory) Lock(readOnly bool) error {
	m.locks.Add(1)
	return nil
}

// Unlock ends an access begun by Lock.
func (m *HeapMemory) Unlock(readOnly bool) error {
	if m.locks.Add(-1) < 0 {
		m.locks.Add(1)
		return fmt.Errorf("heap memory: unlock without lock")
	}
	return nil
}

// Bytes is the whole buffer.
func (m *HeapMemory) Bytes() []byte { return m.buf }

// Locked reports how many accesses are in progress; it is zero between surface method calls.
func (m *HeapMemory) Locked() int { return int(m.locks.Load()) }

// NewHeapSurface returns a zeroed surface of tensor type t backed by a HeapMemory.
func NewHeapSurface(name string, t mil.Type) (*Surface, error) {
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		return nil, fmt.Errorf("surface %q: dtype %s: surfaces hold fp16 or fp32", name, t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return nil, fmt.Errorf("surface %q: type %s has a negative dim", name, t)
		}
	}
	return NewSurface(name, t, NewHeapMemory(t.NumElements()*t.DType.Bits()/8))
}
