//go:build darwin || linux

package cpu

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego"
)

func init() { loaders["openblas"] = loadOpenBLAS }

// openBLASNames are the shared-library names tried, in order.
var openBLASNames = []string{"libopenblas.so.0", "libopenblas.so", "libopenblas.dylib"}

// loadOpenBLAS opens OpenBLAS with purego and binds cblas_sgemm and its
// thread controls.
func loadOpenBLAS() (*library, error) {
	var handle uintptr
	var errs []error
	for _, name := range openBLASNames {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			handle = h
			break
		}
		errs = append(errs, err)
	}
	if handle == 0 {
		return nil, fmt.Errorf("no OpenBLAS library found: %w", errors.Join(errs...))
	}
	sgemm, err := bindCBLAS(handle)
	if err != nil {
		return nil, err
	}
	var setThreads func(int32)
	var getThreads func() int32
	if err := bindFunc(&setThreads, handle, "openblas_set_num_threads"); err != nil {
		return nil, err
	}
	if err := bindFunc(&getThreads, handle, "openblas_get_num_threads"); err != nil {
		return nil, err
	}
	return &library{
		name:       "openblas",
		sgemm:      sgemm,
		setThreads: func(n int) { setThreads(int32(n)) },
		threads:    func() int { return int(getThreads()) },
	}, nil
}
