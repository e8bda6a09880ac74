package cpu

import (
	"github.com/ebitengine/purego"
)

func init() { loaders["accelerate"] = loadAccelerate }

// acceleratePath is the system framework that holds Apple's cblas_sgemm.
const acceleratePath = "/System/Library/Frameworks/Accelerate.framework/Accelerate"

// loadAccelerate opens Accelerate with purego and binds cblas_sgemm.
// Accelerate sizes its own thread pool, so it has no thread control here.
func loadAccelerate() (*library, error) {
	handle, err := purego.Dlopen(acceleratePath, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, err
	}
	sgemm, err := bindCBLAS(handle)
	if err != nil {
		return nil, err
	}
	return &library{name: "accelerate", info: BLASInfo{Name: "accelerate", CoreChoice: CoreNA}, sgemm: sgemm}, nil
}
