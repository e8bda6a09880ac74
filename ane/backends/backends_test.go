package backends

import (
	"runtime"
	"testing"

	"github.com/anestar/anestar/ane"
)

func TestBothRegistered(t *testing.T) {
	names := map[string]ane.Status{}
	for _, s := range ane.List() {
		names[s.Name] = s
	}
	e, ok := names["emulator"]
	if !ok || e.Err != nil {
		t.Errorf("emulator: registered %v, unavailable because %v", ok, e.Err)
	}
	a, ok := names["ane"]
	if !ok {
		t.Fatal(`"ane" is not registered`)
	}
	if a.Priority <= e.Priority {
		t.Errorf("ane priority %d is not above the emulator's %d", a.Priority, e.Priority)
	}
	if runtime.GOOS != "darwin" && a.Err == nil {
		t.Errorf("ane is available on %s", runtime.GOOS)
	}
	if runtime.GOOS != "darwin" {
		b, err := ane.Open("auto", ane.Settings{})
		if err != nil || b.Name() != "emulator" {
			t.Errorf("auto on %s: %v, %v; want the emulator", runtime.GOOS, b, err)
		}
	}
}
