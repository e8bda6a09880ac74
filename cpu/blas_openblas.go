//go:build darwin || linux

package cpu

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/anestar/anestar/internal/cpuid"
	"github.com/anestar/anestar/internal/memlimit"
	"github.com/ebitengine/purego"
)

func init() { loaders["openblas"] = loadOpenBLAS }

// openBLASNames are the shared-library names tried, in order.
var openBLASNames = []string{"libopenblas.so.0", "libopenblas.so", "libopenblas.dylib"}

// openBLASBuffer is the work buffer OpenBLAS 0.3.21 maps (BUFFER_SIZE on x86-64) for each thread
// that calls it at once; it retries a failed mmap of one for ever.
const openBLASBuffer = 128 << 20

// addressSpaceLeft reports the address space left under the process's limit, and whether it has one.
var addressSpaceLeft = memlimit.AddressSpaceLeft

// openBLASNeeds is the address space OpenBLAS needs beyond the process's when as many threads call it at
// once as Sgemm lets (GOMAXPROCS), with room for one more and for its own start-up.
func openBLASNeeds() uint64 { return uint64(runtime.GOMAXPROCS(0)+2) * openBLASBuffer }

// coreTypeEnv is OpenBLAS's own variable that names its kernels; it is read when the library loads.
const coreTypeEnv = "OPENBLAS_CORETYPE"

// loadOpenBLAS opens OpenBLAS with purego and binds sgemm_ (cblas_sgemm
// where it lacks the Fortran symbol), its thread controls and its
// self-description. OpenBLAS reads its settings from the environment when it
// loads, so the loader sets two of its variables just for the dlopen (and
// removes them again, so that child processes choose afresh): the core
// (coreTypeEnv), unless the user named one, and the thread count.
func loadOpenBLAS() (*library, error) {
	info := BLASInfo{Name: "openblas", CoreChoice: CoreUser, AutoCore: openBLASCoreFor(cpuid.X86())}
	if os.Getenv(coreTypeEnv) == "" {
		info.CoreChoice = CoreLibrary
		if core := info.AutoCore; core != "" {
			info.CoreChoice = CoreAuto
			os.Setenv(coreTypeEnv, core)
			defer os.Unsetenv(coreTypeEnv)
		}
	}
	// Unless the environment sizes OpenBLAS's thread pool, run it single-threaded and split large
	// products over goroutines instead (see splitSgemm). OpenBLAS reads the variable when it loads:
	// told afterwards (openblas_set_num_threads), it keeps the worker threads it started, which were
	// seen to take a tenth of a core beside the program. SetBLASThreads can still add threads later.
	sized := os.Getenv("OPENBLAS_NUM_THREADS") != "" || os.Getenv("OMP_NUM_THREADS") != ""
	if !sized {
		os.Setenv("OPENBLAS_NUM_THREADS", "1")
		defer os.Unsetenv("OPENBLAS_NUM_THREADS")
	}
	if left, limited := addressSpaceLeft(); limited && left < openBLASNeeds() {
		return nil, &unusableError{name: "openblas", err: fmt.Errorf("not loaded: the address-space limit "+
			"(ulimit -v) leaves %d MiB, and OpenBLAS, which maps about %d MiB of buffers here, hangs when it "+
			"cannot map them", left>>20, openBLASNeeds()>>20)}
	}
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
	sgemm, err := bindFortranSgemm(handle)
	if err != nil {
		if sgemm, err = bindCBLAS(handle); err != nil {
			return nil, err
		}
	}
	var setThreads func(int32)
	var getThreads func() int32
	if err := bindFunc(&setThreads, handle, "openblas_set_num_threads"); err != nil {
		return nil, err
	}
	if err := bindFunc(&getThreads, handle, "openblas_get_num_threads"); err != nil {
		return nil, err
	}
	// Both describe the library only; an OpenBLAS without them still computes.
	var config, corename func() string
	if bindFunc(&config, handle, "openblas_get_config") == nil {
		info.Config = strings.TrimSpace(config())
		info.Version = openBLASVersion(info.Config)
	}
	if bindFunc(&corename, handle, "openblas_get_corename") == nil {
		info.Core = strings.TrimSpace(corename())
	}
	l := &library{
		name:       "openblas",
		info:       info,
		sgemm:      sgemm,
		setThreads: func(n int) { setThreads(int32(n)) },
		threads:    func() int { return int(getThreads()) },
	}
	if !sized {
		setThreads(1)
	}
	l.goSplit.Store(getThreads() == 1)
	return l, nil
}
