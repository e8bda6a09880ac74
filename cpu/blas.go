package cpu

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/internal/vec"
)

// BLAS is one implementation of the BLAS routines the host math needs.
// Every implementation validates its arguments the same way and passes the
// same conformance test.
type BLAS interface {
	// Name is the implementation's name: "accelerate", "openblas", "gonum" or "reference".
	Name() string
	// Sgemm computes C = alpha*op(A)*op(B) + beta*C on row-major matrices;
	// see the package function Sgemm.
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
		b []float32, ldb int, beta float32, c []float32, ldc int) error
}

// BLASEnv is the environment variable that forces one implementation
// (accelerate, openblas, gonum or reference); empty or "auto" picks the first
// of accelerate, openblas and gonum that loads.
const BLASEnv = "ANESTAR_BLAS"

// blasOrder lists the implementations in the order "auto" tries them.
var blasOrder = []string{"accelerate", "openblas", "gonum"}

// sgemmFunc is an implementation's sgemm on arguments already validated,
// with m, n, k > 0.
type sgemmFunc func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int)

// library is a loaded BLAS: its name, its raw sgemm and, where the library
// has them, its thread controls.
type library struct {
	name       string      // implementation name
	info       BLASInfo    // what it is, for reports
	sgemm      sgemmFunc   // raw sgemm, arguments validated by Sgemm
	setThreads func(n int) // sets the library's thread count; nil when it has none
	threads    func() int  // reports the library's thread count; nil when it has none
	goSplit    atomic.Bool // the library runs single-threaded: Sgemm splits large products over goroutines
}

var _ BLAS = (*library)(nil)

// Name implements BLAS.
func (l *library) Name() string { return l.name }

// Sgemm implements BLAS.
func (l *library) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return l.gemm("cpu.Sgemm", spread, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmSerial is Sgemm in one library call.
func (l *library) sgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return l.gemm("cpu.SgemmSerial", whole, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// sgemmInTurn is Sgemm's blocks computed in turn on the caller.
func (l *library) sgemmInTurn(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return l.gemm("cpu.SgemmInTurn", inTurn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// splitMode is how library.gemm runs a large product on a single-threaded library.
type splitMode int

const (
	whole  splitMode = iota // one library call (SgemmSerial: for callers that choose it by shape alone)
	spread                  // the blocks splitPieces fixes, over the core slots free (Sgemm)
	inTurn                  // the same blocks, in turn on the caller (SgemmInTurn): Sgemm's bits on one core
)

// gemm validates the arguments (errors name caller), handles the empty and the scaling-only products,
// and runs the library's sgemm, holding a core slot when the library is single-threaded; a large
// product then runs as mode says.
func (l *library) gemm(caller string, mode splitMode, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	if err := checkSgemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
		return fmt.Errorf("%s (%s): %w", caller, l.name, err)
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 || alpha == 0 {
		scaleMatrix(m, n, beta, c, ldc)
		return nil
	}
	if m*n*k <= tinyMACs {
		referenceSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return nil
	}
	if m <= fewRows && !transB && alpha == 1 && beta == 0 && n >= 8 && n*k <= fewRowsB && vec.Has() {
		fewRowsSgemm(transA, m, n, k, a, lda, b, ldb, c, ldc)
		return nil
	}
	if !l.goSplit.Load() {
		l.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return nil
	}
	acquireCore()
	defer releaseCore()
	if mode != whole {
		if size, pieces, byRows := splitPieces(m, n, k); pieces > 1 {
			l.splitSgemm(mode == inTurn, size, byRows, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return nil
		}
	}
	l.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	return nil
}

// tinyMACs is the most multiply-adds of a product that runs the fixed-order loop (referenceSgemm) instead
// of the library: a call into a library costs about a microsecond, the loop a nanosecond or two per
// multiply-add (a token's step in generation has products of 16: a head's scores against its own new
// key). Such products give the same bits on every machine and library.
const tinyMACs = 256

// scaleMatrix sets C = beta*C; beta == 0 clears C even where it holds NaN,
// as BLAS does.
func scaleMatrix(m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// checkSgemm validates sgemm's dimensions, leading dimensions and slice
// lengths for row-major storage; every size must fit a C int.
func checkSgemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	for _, d := range []struct {
		name string
		v    int
	}{{"m", m}, {"n", n}, {"k", k}, {"lda", lda}, {"ldb", ldb}, {"ldc", ldc}} {
		if d.v < 0 || d.v > math.MaxInt32 {
			return fmt.Errorf("%s = %d out of range [0, %d]", d.name, d.v, math.MaxInt32)
		}
	}
	ar, ac := m, k // stored shape of A
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n // stored shape of B
	if transB {
		br, bc = n, k
	}
	if err := checkMatrix("A", ar, ac, a, lda); err != nil {
		return err
	}
	if err := checkMatrix("B", br, bc, b, ldb); err != nil {
		return err
	}
	return checkMatrix("C", m, n, c, ldc)
}

// checkMatrix checks that a rows x cols row-major matrix with leading
// dimension ld fits in s.
func checkMatrix(name string, rows, cols int, s []float32, ld int) error {
	if ld < max(1, cols) {
		return fmt.Errorf("ld%s = %d, want >= %d (columns)", strings.ToLower(name), ld, max(1, cols))
	}
	if rows == 0 || cols == 0 {
		return nil
	}
	need := (rows-1)*ld + cols // no overflow: all factors < 2^31
	if len(s) < need {
		return fmt.Errorf("%s has %d elements, a %dx%d matrix with leading dimension %d needs %d",
			name, len(s), rows, cols, ld, need)
	}
	return nil
}

// loaders opens each implementation this build knows, by name.
var loaders = map[string]func() (*library, error){
	"gonum":       loadGonum,
	ReferenceBLAS: loadReference,
}

// loaded caches each implementation's first load result.
var loaded sync.Map // name -> loadResult

type loadResult struct {
	lib *library
	err error
}

// LoadBLAS opens the named implementation ("accelerate", "openblas" or
// "gonum") without making it current. Loading is done once per name.
func LoadBLAS(name string) (BLAS, error) {
	l, err := loadLibrary(name)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func loadLibrary(name string) (*library, error) {
	if r, ok := loaded.Load(name); ok {
		return r.(loadResult).lib, r.(loadResult).err
	}
	load, ok := loaders[name]
	if !ok {
		if !isBLASName(name) {
			return nil, fmt.Errorf("cpu: unknown BLAS %q (want %s, %s or auto)", name, strings.Join(blasOrder, ", "), ReferenceBLAS)
		}
		return nil, fmt.Errorf("cpu: BLAS %q is not available in this build", name)
	}
	var lib *library
	var err error
	if name == "gonum" || name == ReferenceBLAS { // pure Go: gonum is the fallback
		lib, err = load()
	} else {
		lib, err = loadVerified(name, load)
	}
	if err != nil {
		err = fmt.Errorf("cpu: loading BLAS %q: %w", name, err)
	}
	r, _ := loaded.LoadOrStore(name, loadResult{lib, err})
	return r.(loadResult).lib, r.(loadResult).err
}

func isBLASName(name string) bool {
	return name == ReferenceBLAS || slices.Contains(blasOrder, name)
}

// selection is the current implementation, or why there is none.
type selection struct {
	lib *library
	err error
}

var (
	current     atomic.Pointer[selection]
	currentOnce sync.Once
)

// choose loads name, or with "" or "auto" the first implementation of
// blasOrder that loads.
func choose(name string) selection {
	if name != "" && name != "auto" {
		lib, err := loadLibrary(name)
		return selection{lib, err}
	}
	var errs []error
	for _, n := range blasOrder {
		lib, err := loadLibrary(n)
		if err == nil {
			for _, e := range errs {
				warnFallback(e, n)
			}
			return selection{lib: lib}
		}
		errs = append(errs, err)
	}
	return selection{err: errors.Join(errs...)}
}

// currentBLAS returns the current selection, making the first one from
// BLASEnv on first use.
func currentBLAS() *selection {
	currentOnce.Do(func() {
		if current.Load() != nil { // SetBLAS came first
			return
		}
		s := choose(strings.ToLower(strings.TrimSpace(os.Getenv(BLASEnv))))
		if s.err != nil {
			s.err = fmt.Errorf("%s=%s: %w", BLASEnv, os.Getenv(BLASEnv), s.err)
		}
		current.CompareAndSwap(nil, &s)
	})
	return current.Load()
}

// CurrentBLAS returns the implementation Sgemm uses, or the error that left
// none (a BLASEnv value that does not load).
func CurrentBLAS() (BLAS, error) {
	s := currentBLAS()
	if s.err != nil {
		return nil, s.err
	}
	return s.lib, nil
}

// BLASName returns the name of the implementation Sgemm uses, or "none"
// when the forced one failed to load.
func BLASName() string {
	if s := currentBLAS(); s.lib != nil {
		return s.lib.name
	}
	return "none"
}

// SetBLAS makes the named implementation ("accelerate", "openblas",
// "gonum", or "auto" for the first that loads) the one Sgemm uses. On error
// the current implementation is kept.
func SetBLAS(name string) error {
	s := choose(strings.ToLower(strings.TrimSpace(name)))
	if s.err != nil {
		return fmt.Errorf("cpu.SetBLAS: %w", s.err)
	}
	current.Store(&s)
	return nil
}

// SetBLASThreads sets the number of threads the current implementation
// uses, where it can be told (OpenBLAS); n < 1 is ignored, as is an
// implementation without a thread control. With n == 1 (OpenBLAS's default
// here, unless OPENBLAS_NUM_THREADS or OMP_NUM_THREADS says otherwise) Sgemm
// splits large products over GOMAXPROCS goroutines itself; with n > 1 the
// library's own threads do.
func SetBLASThreads(n int) {
	if s := currentBLAS(); s.lib != nil && s.lib.setThreads != nil && n >= 1 {
		s.lib.setThreads(min(n, math.MaxInt32))
		s.lib.goSplit.Store(n == 1)
	}
}

// BLASThreads reports the current implementation's thread count, or 0 when
// it has no thread control.
func BLASThreads() int {
	if s := currentBLAS(); s.lib != nil && s.lib.threads != nil {
		return s.lib.threads()
	}
	return 0
}

// SgemmSerial is Sgemm in one library call on the calling goroutine, for
// callers that run many products in parallel themselves (such as the
// emulator's per-head matmuls). Its bits may differ from Sgemm's for the same
// product (a BLAS's sums may depend on the block): a caller chooses between
// the two by the shapes alone, never by timing; SgemmInTurn gives Sgemm's bits
// on one core. With a multi-threaded library the library still uses its threads.
func SgemmSerial(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return currentGemm("cpu.SgemmSerial", whole, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmInTurn is Sgemm on the calling goroutine alone: the same blocks as
// Sgemm's, computed in turn, so the two give the same bits and a caller may
// choose either by timing (the host-math queue runs its products on one core
// while the script goes on, on every core once it waits).
func SgemmInTurn(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return currentGemm("cpu.SgemmInTurn", inTurn, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// Sgemm computes C = alpha*op(A)*op(B) + beta*C with the current BLAS, where
// op(X) is X or its transpose. All matrices are row-major: op(A) is m x k,
// op(B) is k x n and C is m x n; A is stored m x k (k x m when transA) with
// row stride lda, B k x n (n x k when transB) with row stride ldb, and C with
// row stride ldc. Leading dimensions must be at least the stored column
// count and the slices long enough; otherwise, or when no BLAS loads, Sgemm
// returns an error and leaves C untouched.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error {
	return currentGemm("cpu.Sgemm", spread, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// currentGemm runs library.gemm on the current BLAS; errors name caller.
func currentGemm(caller string, mode splitMode, transA, transB bool, m, n, k int, alpha float32,
	a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error {
	s := currentBLAS()
	if s.err != nil {
		return fmt.Errorf("%s: %w", caller, s.err)
	}
	return s.lib.gemm(caller, mode, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
