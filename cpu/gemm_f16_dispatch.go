package cpu

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// AMXEnv is the environment variable that chooses what runs on AMX tiles where they are usable:
// empty or "auto" runs both the emulator's fp16 products (SgemmF16) and its float32 ones (SgemmF32)
// there; "f16" only the fp16 products; "off" neither, leaving everything to the BLAS.
const AMXEnv = "ANESTAR_AMX"

// AMX uses, the values ParseAMXEnv returns.
const (
	AMXOff  = "off"  // no product on AMX
	AMXF16  = "f16"  // the fp16 products only
	AMXAuto = "auto" // fp16 and float32 products
)

// ParseAMXEnv reads a value of AMXEnv: AMXAuto, AMXF16 or AMXOff, or an error naming the valid values.
func ParseAMXEnv(v string) (string, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "", AMXAuto:
		return AMXAuto, nil
	case AMXF16, AMXOff:
		return s, nil
	}
	return AMXOff, fmt.Errorf("%s=%s: want auto, f16 or off", AMXEnv, v)
}

// amxUse is AMXEnv's verdict, read once (an invalid value counts as off; the command line reports it
// before anything runs).
var amxUse = sync.OnceValue(func() string {
	u, err := ParseAMXEnv(os.Getenv(AMXEnv))
	if err != nil {
		return AMXOff
	}
	return u
})

// amxAllowed reports whether AMXEnv lets the fp16 products run on AMX.
func amxAllowed() bool { return amxUse() != AMXOff }

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
	l := amxWrap(base, f16Format)
	actual, _ := amxLibs.LoadOrStore(base, l)
	return actual.(*library)
}

// SgemmF16 is Sgemm for operands that hold fp16 values (float32-held, as the emulator's fp16
// numerics keep them): with alpha 1 and beta 0 or 1 it runs on AMX tiles where F16GemmName says "amx"
// (GemmF16's exact bf16 split, split over goroutines as Sgemm splits), otherwise, and for any
// operand outside GemmF16's contract, on the current BLAS. Sums come in another order than the
// BLAS's: results agree with Sgemm's within an fp32 sgemm's rounding.
func SgemmF16(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return wrappedGemm("cpu.SgemmF16", f16Library, spread, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmF16Serial is SgemmF16 without splitting the product over goroutines (see SgemmSerial).
func SgemmF16Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return wrappedGemm("cpu.SgemmF16Serial", f16Library, whole, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// wrappedGemm runs the product on wrap of the current BLAS; errors name caller.
func wrappedGemm(caller string, wrap func(*library) *library, mode splitMode, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	s := currentBLAS()
	if s.err != nil {
		return fmt.Errorf("%s: %w", caller, s.err)
	}
	return wrap(s.lib).gemm(caller, mode, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// f32Libs caches the library with the AMX float32 path wrapped around each BLAS.
var f32Libs sync.Map // *library -> *library

// f32Library returns what SgemmF32 and SgemmF32Serial run on with base the current BLAS: base wrapped with
// GemmF32's path, for products with alpha 1 and beta 0 or 1, when AMX is usable and AMXEnv is auto,
// except on the reference gemm (see f16Library); else base.
func f32Library(base *library) *library {
	if base.name == ReferenceBLAS || amxUse() != AMXAuto || !AMXUsable() {
		return base
	}
	if l, ok := f32Libs.Load(base); ok {
		return l.(*library)
	}
	l := amxWrap(base, f32Format)
	actual, _ := f32Libs.LoadOrStore(base, l)
	return actual.(*library)
}

// amxWrap returns base with products with alpha 1 and beta 0 or 1 on AMX tiles in format f; other
// scalings, and operands outside the format's contract, go to base (with beta 1 C is then as it
// was, with beta 0 fully rewritten).
func amxWrap(base *library, f *amxFormat) *library {
	l := &library{name: base.name, info: base.info}
	l.sgemm = func(transA, transB bool, m, n, k int, alpha float32,
		a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		if alpha == 1 && (beta == 0 || beta == 1) && f.gemm(transA, transB, m, n, k, a, lda, b, ldb, beta == 1, c, ldc) {
			return
		}
		base.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	l.goSplit.Store(true) // the AMX path is single-threaded: split large products over goroutines
	return l
}

// SgemmF32 is Sgemm for the emulator's float32 products: with alpha 1 and beta 0 or 1 it runs on AMX
// tiles where GemmName says "amx" (GemmF32's three-part split, split over goroutines as Sgemm splits),
// otherwise, and for any operand outside GemmF32's contract, on the current BLAS. Results agree with
// Sgemm's within fp32 rounding, not bit for bit. (The host's products stay on the BLAS: there, on
// activations read back from memory, AMX measured no faster.)
func SgemmF32(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return wrappedGemm("cpu.SgemmF32", f32Library, spread, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmF32Serial is SgemmF32 without splitting the product over goroutines (see SgemmSerial).
func SgemmF32Serial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return wrappedGemm("cpu.SgemmF32Serial", f32Library, whole, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// GemmName names what SgemmF32 runs on, for reports: "amx" (GemmF32's path, other scalings and
// operands outside its contract on the BLAS) or "blas".
func GemmName() string {
	if s := currentBLAS(); s.lib != nil && f32Library(s.lib) != s.lib {
		return "amx"
	}
	return "blas"
}

// F16GemmName names what SgemmF16 runs on, for reports: "amx" or "blas" (the current BLAS).
func F16GemmName() string {
	if s := currentBLAS(); s.lib != nil && f16Library(s.lib) != s.lib {
		return "amx"
	}
	return "blas"
}
