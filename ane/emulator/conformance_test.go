package emulator

import (
	"testing"

	"github.com/anestar/anestar/ane/anetest"
)

func TestConformanceFP16(t *testing.T) {
	anetest.Run(t, New(Options{Numerics: FP16}))
}

func TestConformanceFP32(t *testing.T) {
	anetest.Run(t, New(Options{Numerics: FP32, CheckNumerics: true}))
}

// TestConformanceRelaxed runs the suite's emulator-only cases too (programs the ANE refuses, which
// a relaxed emulator runs), with the ANE's numerics.
func TestConformanceRelaxed(t *testing.T) {
	anetest.Run(t, New(Options{Numerics: FP16, Relaxed: true}))
}
