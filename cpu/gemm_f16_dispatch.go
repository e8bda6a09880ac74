package cpu

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// AMXEnv is the environment variable that turns the AMX path of SgemmF16 off: "off" runs the fp16
// products on the BLAS too; empty or "auto" uses AMX where it is usable.
const AMXEnv = "ANESTAR_AMX"

// ParseAMXEnv reads a value of AMXEnv: whether AMX may be used, or an error naming the valid values.
func ParseAMXEnv(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "auto":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%s: want auto or off", AMXEnv, v)
}

// amxAllowed is AMXEnv's verdict, read once (an invalid value counts as off; the command line
// reports it before anything runs).
var amxAllowed = sync.OnceValue(func() bool {
	ok, err := ParseAMXEnv(os.Getenv(AMXEnv))
	return ok && err == nil
})

// amxLibs caches the AMX library wrapped around each BLAS.
var amxLibs sync.Map // *library -> *library

// f16Library returns what SgemmF16 runs on with base the current BLAS: base wrapped with the AMX
// path when AMX is usable and allowed, except on the reference gemm, whose one fixed order of sums
// the emulator's exactness tests rely on; else base.
func f16Library(base *library) *library {
	if base.name == ReferenceBLAS || !amxAllowed() || !AMXUsable() {
		return base
	}
	if l, ok := amxLibs.Load(base); ok {
		return l.(*library)
	}
	l := &library{name: base.name, info: base.info, sgemm: func(transA, transB bool, m, n, k int, alpha float32,
		a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		// Other scalings, and operands outside GemmF16's contract (C is then fully rewritten), go to the BLAS.
		if alpha == 1 && beta == 0 && gemmF16(transA, transB, m, n, k, a, lda, b, ldb, c, ldc) == nil {
			return
		}
		base.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}}
	l.goSplit.Store(true) // the AMX path is single-threaded: split large products over goroutines
	actual, _ := amxLibs.LoadOrStore(base, l)
	return actual.(*library)
}

// SgemmF16 is Sgemm for operands that hold fp16 values (float32-held, as the emulator's fp16
// numerics keep them): with alpha 1 and beta 0 it runs on AMX tiles where F16GemmName says "amx"
// (GemmF16's exact bf16 split, split over goroutines as Sgemm splits), otherwise, and for any
// operand outside GemmF16's contract, on the current BLAS. Sums come in another order than the
// BLAS's: results agree with Sgemm's within an fp32 sgemm's rounding.
func SgemmF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return f16Gemm("cpu.SgemmF16", true, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmF16Serial is SgemmF16 without splitting the product over goroutines (see SgemmSerial).
func SgemmF16Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return f16Gemm("cpu.SgemmF16Serial", false, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func f16Gemm(caller string, split, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	s := currentBLAS()
	if s.err != nil {
		return fmt.Errorf("%s: %w", caller, s.err)
	}
	return f16Library(s.lib).gemm(caller, split, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// F16GemmName names what SgemmF16 runs on, for reports: "amx" or "blas" (the current BLAS).
func F16GemmName() string {
	if s := currentBLAS(); s.lib != nil && f16Library(s.lib) != s.lib {
		return "amx"
	}
	return "blas"
}
