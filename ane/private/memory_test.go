package private

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestSurfaceMemoryLocks(t *testing.T) {
	s := &fakeSurface{buf: make([]byte, 8)}
	m := &surfaceMemory{name: "x", s: s}
	if err := m.Lock(true); err != nil {
		t.Fatal(err)
	}
	if len(m.Bytes()) != 8 {
		t.Errorf("Bytes is %d long", len(m.Bytes()))
	}
	if err := m.Unlock(true); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(false); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(false); err != nil {
		t.Fatal(err)
	}
	want := []string{"lock ro", "unlock ro", "lock rw", "unlock rw"}
	if !reflect.DeepEqual(s.locks, want) {
		t.Errorf("locks %q, want %q", s.locks, want)
	}
	if err := m.Unlock(true); err == nil || !strings.Contains(err.Error(), `surface "x": unlock without lock`) {
		t.Errorf("unbalanced Unlock: %v", err)
	}
	s.errLock = errors.New("IOSurfaceLock: kern_return_t 0xe00002c2")
	if err := m.Lock(false); err == nil || err.Error() != `surface "x": IOSurfaceLock: kern_return_t 0xe00002c2` {
		t.Errorf("failed lock: %v", err)
	}
	s.errLock = nil
	if err := m.Unlock(false); err == nil {
		t.Errorf("a failed Lock left an access open")
	}
}

func TestSurfaceMemoryReleaseWaitsForAccess(t *testing.T) {
	s := &fakeSurface{buf: make([]byte, 4)}
	m := &surfaceMemory{name: "y", s: s}
	if err := m.Lock(false); err != nil {
		t.Fatal(err)
	}
	m.release()
	if s.freed {
		t.Fatal("freed during an access")
	}
	if err := m.Lock(true); err == nil || !strings.Contains(err.Error(), "kernel is closed") {
		t.Errorf("Lock after release: %v", err)
	}
	if err := m.Unlock(false); err != nil {
		t.Fatal(err)
	}
	if !s.freed {
		t.Errorf("not freed at the last Unlock")
	}
	m.release() // a second release must not free again (the fake panics on a double free)
}
