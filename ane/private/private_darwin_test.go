//go:build darwin && arm64

package private

import (
	"context"
	"testing"

	"github.com/anestar/anestar/ane/anetest"
)

// openOrSkip opens the backend, or skips the test saying why it is unavailable.
func openOrSkip(t testing.TB) *Backend {
	t.Helper()
	if err := Probe(); err != nil {
		t.Skipf("ANE backend unavailable: %v", err)
	}
	b, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProbe(t *testing.T) {
	if err := Probe(); err != nil {
		t.Skipf("Probe: %v", err)
	}
	drv, _ := loadDriver()
	t.Logf("Probe: frameworks loaded; NSTemporaryDirectory() = %s", drv.tempDir())
}

func TestSmoke(t *testing.T) {
	runSmoke(t, openOrSkip(t))
}

// TestConformance runs the conformance suite on the ANE: its hardware-eligible part (about 30 programs
// reach the framework when this was written) must pass; every program the ANE is known to refuse is
// checked to be refused before it reaches the framework, then skipped. A process can compile only about
// 100 programs; run it alone (-run TestConformance) if compiles start failing late in the run.
func TestConformance(t *testing.T) {
	b := openOrSkip(t)
	before := b.Compiles()
	anetest.Run(t, b)
	t.Logf("conformance compiles: %d (process total %d)", b.Compiles()-before, b.Compiles())
}

func BenchmarkEval(b *testing.B) {
	be := openOrSkip(b)
	k, err := be.Compile(doubleProgram(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := k.Eval(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
