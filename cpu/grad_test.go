package cpu

import "github.com/anestar/anestar/internal/numtest"

// The shared numerical helpers (internal/numtest), under the names these tests use.
var (
	numGrad  = numtest.NumGrad
	to64     = numtest.To64
	closeTo  = numtest.CloseTo
	randNorm = numtest.RandNorm
)
