package nn

import "github.com/anestar/anestar/internal/numtest"

// The shared test helpers, under the names this package's tests use.
var (
	numGrad  = numtest.NumGrad
	to64     = numtest.To64
	closeTo  = numtest.CloseTo
	randNorm = numtest.RandNorm
)
