package emulator

import (
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/anetest"
)

func TestConformanceFP16(t *testing.T) {
	anetest.Run(t, New(ane.Options{Numerics: ane.FP16}))
}

func TestConformanceFP32(t *testing.T) {
	anetest.Run(t, New(ane.Options{Numerics: ane.FP32, CheckNumerics: true}))
}
