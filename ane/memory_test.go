package ane

import (
	"errors"
	"testing"

	"github.com/anestar/anestar/mil"
)

// A released HeapMemory hands its bytes back once, when no access is in progress, and fails every
// later access with ErrClosed; a surface over given bytes uses them as they are.
func TestHeapMemoryRelease(t *testing.T) {
	buf := []byte{1, 2, 3, 4}
	m := NewHeapMemoryOn(buf)
	if err := m.Lock(true); err != nil || &m.Bytes()[0] != &buf[0] || m.Bytes()[3] != 4 {
		t.Fatalf("lock: %v; bytes %v, want the given buffer as it is", err, m.Bytes())
	}
	if err := m.Unlock(true); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(true); err == nil {
		t.Error("unlock without lock: no error")
	}
	b := m.Release()
	if len(b) != 4 || &b[0] != &buf[0] {
		t.Fatalf("release gave %v, want the buffer", b)
	}
	if err := m.Lock(false); !errors.Is(err, ErrClosed) {
		t.Errorf("lock after release: %v, want ErrClosed", err)
	}
	if m.Bytes() != nil || m.Release() != nil {
		t.Error("a released memory still holds or gives its bytes")
	}

	// Released during an access: the bytes may still be in use and are not handed back.
	m = NewHeapMemory(8)
	if err := m.Lock(true); err != nil {
		t.Fatal(err)
	}
	if b := m.Release(); b != nil {
		t.Errorf("release during an access gave %d bytes, want none", len(b))
	}
	if err := m.Unlock(true); err != nil {
		t.Errorf("unlock of the access begun before release: %v", err)
	}

	s, err := NewHeapSurfaceOn("x", mil.Tensor(mil.FP16, 1, 2, 1, 2), []byte{0, 0x3c, 0, 0, 0, 0, 0, 0xc0})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float32, 4)
	if err := s.ReadChannels(0, 2, got); err != nil || got[0] != 1 || got[3] != -2 {
		t.Errorf("surface over given bytes reads %v, %v; want [1 0 0 -2]", got, err)
	}
	if _, err := NewHeapSurfaceOn("y", mil.Tensor(mil.Int32, 2), make([]byte, 8)); err == nil {
		t.Error("int32 surface: no error")
	}
	if _, err := NewHeapSurfaceOn("z", mil.Tensor(mil.FP32, 2), make([]byte, 7)); err == nil {
		t.Error("surface over too few bytes: no error")
	}
}
