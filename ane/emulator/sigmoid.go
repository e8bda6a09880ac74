package emulator

import "github.com/anestar/anestar/internal/fastexp"

// sigmoid32 is 1/(1+e^-x).
func sigmoid32(x float32) float32 { return 1 / (1 + fastexp.Exp32(-x)) }
