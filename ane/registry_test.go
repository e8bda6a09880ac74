package ane

import (
	"errors"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

type fakeBackend struct{ name string }

func (f fakeBackend) Name() string                                      { return f.name }
func (f fakeBackend) Compile(*mil.Program, mil.Weights) (Kernel, error) { return nil, errors.New("no") }
func (f fakeBackend) Compiles() int                                     { return 0 }
func (f fakeBackend) PeakFLOPS() float64                                { return 0 }

func TestRegistry(t *testing.T) {
	Register(Entry{Name: "t-high", Priority: 100, Probe: func() error { return errors.New("not here") },
		Open: func(Settings) (Backend, error) { return fakeBackend{"t-high"}, nil }})
	Register(Entry{Name: "t-mid", Priority: 50, Open: func(Settings) (Backend, error) { return fakeBackend{"t-mid"}, nil }})
	Register(Entry{Name: "t-low", Priority: -1, Open: func(Settings) (Backend, error) { return fakeBackend{"t-low"}, nil }})
	l := List()
	if len(l) < 3 || l[0].Name != "t-high" || l[0].Err == nil || l[1].Name != "t-mid" {
		t.Fatalf("List: %+v", l)
	}
	t.Setenv(EnvBackend, "")
	if b, err := Open("auto", Settings{}); err != nil || b.Name() != "t-mid" {
		t.Errorf("auto: %v, %v; want t-mid (t-high is unavailable)", b, err)
	}
	t.Setenv(EnvBackend, "t-low")
	if b, err := Open("", Settings{}); err != nil || b.Name() != "t-low" {
		t.Errorf("auto with %s=t-low: %v, %v", EnvBackend, b, err)
	}
	if b, err := Open("t-mid", Settings{}); err != nil || b.Name() != "t-mid" {
		t.Errorf("a named backend beats the environment: %v, %v", b, err)
	}
	if _, err := Open("t-high", Settings{}); err == nil || !strings.Contains(err.Error(), "not here") {
		t.Errorf("unavailable backend: %v", err)
	}
	if _, err := Open("nope", Settings{}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown backend: %v", err)
	}
}

func TestHeapMemory(t *testing.T) {
	m := NewHeapMemory(8)
	if err := m.Unlock(false); err == nil {
		t.Error("unlock without lock: no error")
	}
	if m.Lock(true) != nil || m.Locked() != 1 || m.Unlock(true) != nil || m.Locked() != 0 {
		t.Error("lock/unlock not balanced")
	}
	if _, err := NewSurface("s", mil.Tensor(mil.FP32, 1, 2, 1, 1), m); err != nil {
		t.Errorf("8 bytes for fp32 [1,2,1,1]: %v", err)
	}
	s, err := NewHeapSurface("z", mil.Tensor(mil.FP16, 3, 5))
	if err != nil || s.Channels() != 3 || s.Spatial() != 5 || s.Bytes() != 30 {
		t.Errorf("[3,5] surface: %v %v", s, err)
	}
}
