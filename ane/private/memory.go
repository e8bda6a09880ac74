package private

import (
	"fmt"
	"sync"

	"github.com/anestar/anestar/ane"
)

// surfaceMemory is the ane.Memory of a kernel surface. It counts the accesses in progress so that a
// surface released by Kernel.Close while a caller is between Lock and Unlock stays mapped until that
// Unlock, and so that an access begun after Close fails instead of touching freed memory.
type surfaceMemory struct {
	name string  // the MIL name, for messages
	s    surface // the IOSurface

	mu       sync.Mutex
	active   int  // accesses between Lock and Unlock
	released bool // the kernel has been closed
	freed    bool // s.free has run
}

var _ ane.Memory = (*surfaceMemory)(nil)

// Lock begins an access to the surface's bytes.
func (m *surfaceMemory) Lock(readOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.released {
		return fmt.Errorf("surface %q: %w", m.name, ane.ErrClosed)
	}
	if err := m.s.lock(readOnly); err != nil {
		return fmt.Errorf("surface %q: %w", m.name, err)
	}
	m.active++
	return nil
}

// Unlock ends an access begun by Lock with the same readOnly value.
func (m *surfaceMemory) Unlock(readOnly bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.active == 0 {
		return fmt.Errorf("surface %q: unlock without lock", m.name)
	}
	err := m.s.unlock(readOnly)
	m.active--
	m.freeIfDone()
	if err != nil {
		return fmt.Errorf("surface %q: %w", m.name, err)
	}
	return nil
}

// Bytes is the whole surface; valid between Lock and Unlock.
func (m *surfaceMemory) Bytes() []byte { return m.s.bytes() }

// release marks the surface closed and frees it once no access is in progress.
func (m *surfaceMemory) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.released = true
	m.freeIfDone()
}

// freeIfDone frees the IOSurface when it is released and idle; m.mu is held.
func (m *surfaceMemory) freeIfDone() {
	if m.released && m.active == 0 && !m.freed {
		m.freed = true
		m.s.free()
	}
}
