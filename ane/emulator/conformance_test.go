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
