package scripts

import (
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"go.starlark.net/starlark"
)

// TestLMCoresLine: the report's cores-busy line is CPU over wall seconds, on average over every phase
// and per phase; a phase too short to measure, or measured in spans too short, shows "-", and under a
// second of steps, or without CPU time, there is no line.
func TestLMCoresLine(t *testing.T) {
	res, _ := runScript(t, "testdata/lm_cores.star", nil, emulator.Options{}, false)
	l, ok := res.Globals["lines"].(*starlark.List)
	if !ok || l.Len() != 5 {
		t.Fatalf("lines: %v", res.Globals["lines"])
	}
	want := []starlark.Value{
		// (1.8+0.5+3.9+0.3)/3.5 = 1.857; 1.80, 2.00, 1.95, 1.20
		starlark.String("Cores busy:      1.86 of 2 on average: forward 1.80, classifier 2.00, backward 1.95, optimizer 1.20"),
		// 3.8/2.4 = 1.583; the classifier's 0.1 s too short
		starlark.String("Cores busy:      1.58 of 4 on average: forward 1.50, classifier -, backward 1.50, optimizer 1.00"),
		starlark.None,
		starlark.None,
		// (1.8+0.9+3.9+0.8)/4.0 = 1.85; the classifier and the optimizer in 1-ms spans
		starlark.String("Cores busy:      1.85 of 2 on average: forward 1.80, classifier -, backward 1.95, optimizer -"),
	}
	for i, w := range want {
		if got := l.Index(i); got != w {
			t.Errorf("line %d: %v, want %v", i, got, w)
		}
	}
}
