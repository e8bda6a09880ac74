package cpu

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// A library is verified before it is used: loading it and a few products, one of them large enough to
// be split over goroutines as Sgemm splits it (each thread's first product makes OpenBLAS map its
// buffers), must finish within selfTestLimit and give the exact products. OpenBLAS fixes its kernels
// when it loads, and older builds forced onto a newer processor are known to compute wrong results;
// OpenBLAS 0.3.21 also retries a failed mmap of its buffers for ever, which a low `ulimit -v` turns
// into a hang. Either way the only recovery is another implementation: "auto" falls back to the next
// one with a one-line message, and a forced one fails to load. A hung library keeps its thread busy:
// nothing can stop a C call.

// selfTestLimit bounds loading and self-testing one library.
var selfTestLimit = 10 * time.Second

// warnOutput receives the message of a fallback.
var warnOutput io.Writer = os.Stderr

// unusableError is a library that failed its self-test, did not finish loading and testing in time, or
// was not loaded because it would hang.
type unusableError struct {
	name  string // implementation name
	info  string // BLASInfo.String() where the library loaded, else ""
	wrong bool   // it computed a wrong product (where another OpenBLAS core may help)
	err   error
}

func (e *unusableError) Error() string {
	what := e.name
	if e.info != "" {
		what = e.info
	}
	return fmt.Sprintf("%s is unusable: %v", what, e.err)
}

func (e *unusableError) Unwrap() error { return e.err }

// loadVerified runs load and the self-test on its library, within selfTestLimit.
func loadVerified(name string, load func() (*library, error)) (*library, error) {
	type result struct {
		lib *library
		err error
	}
	done := make(chan result, 1)
	go func() {
		lib, err := load()
		if err == nil {
			if terr := selfTest(lib); terr != nil {
				lib, err = nil, &unusableError{name: name, info: lib.info.String(), wrong: true, err: fmt.Errorf("sgemm self-test: %w", terr)}
			}
		}
		done <- result{lib, err}
	}()
	timer := time.NewTimer(selfTestLimit)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.lib, r.err
	case <-timer.C:
		big := selfTestProducts[len(selfTestProducts)-1]
		return nil, &unusableError{name: name, err: fmt.Errorf("loading it and a %dx%dx%d test product took over %v "+
			"(OpenBLAS hangs so when it cannot map its buffers, as under a low `ulimit -v`)", big.m, big.n, big.k, selfTestLimit)}
	}
}

// selfTestProducts are the products of the self-test: every transpose on small sizes, and one that
// Sgemm splits (2*m*n*k >= splitFLOPs).
var selfTestProducts = []struct {
	transA, transB bool
	m, n, k        int
}{
	{false, false, 3, 5, 7}, {true, false, 17, 9, 33}, {false, true, 9, 17, 33}, {true, true, 33, 16, 9},
	{false, false, 256, 128, 128},
}

// selfTest checks l's products against float64 ones. The inputs are small multiples of 1/4, so every
// partial sum is exact in float32 and any correct sgemm, in any order of summation, gives the float64
// product exactly.
func selfTest(l *library) error {
	for _, p := range selfTestProducts {
		lda, ldb := p.k, p.n
		if p.transA {
			lda = p.m
		}
		if p.transB {
			ldb = p.k
		}
		a, b, c := quarters(p.m*p.k, 3), quarters(p.k*p.n, 5), quarters(p.m*p.n, 7)
		want := make([]float64, len(c))
		const alpha, beta = 2, -1
		for i := range p.m {
			for j := range p.n {
				var s float64
				for q := range p.k {
					ai, bj := i*lda+q, q*ldb+j
					if p.transA {
						ai = q*lda + i
					}
					if p.transB {
						bj = j*ldb + q
					}
					s += float64(a[ai]) * float64(b[bj])
				}
				want[i*p.n+j] = alpha*s + beta*float64(c[i*p.n+j])
			}
		}
		if err := l.gemm("cpu: self-test", spread, p.transA, p.transB, p.m, p.n, p.k, alpha, a, lda, b, ldb, beta, c, p.n); err != nil {
			return err
		}
		for i, v := range c {
			if float64(v) != want[i] {
				return fmt.Errorf("%s%s %dx%dx%d product: C[%d,%d] = %g, want %g",
					transName(p.transA), transName(p.transB), p.m, p.n, p.k, i/p.n, i%p.n, v, want[i])
			}
		}
	}
	return nil
}

func transName(t bool) string {
	if t {
		return "T"
	}
	return "N"
}

// quarters returns n multiples of 1/4 in [-5/4, 5/4], varied by seed.
func quarters(n, seed int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32((i*seed+seed)%11-5) / 4
	}
	return s
}

// warnFallback tells the user that a library is unusable and next is used instead, and how to choose
// either one.
func warnFallback(err error, next string) {
	var terr *unusableError
	if !errors.As(err, &terr) {
		return
	}
	hint := ""
	if terr.name == "openblas" && terr.wrong {
		hint = "; " + coreTypeEnv + " names another OpenBLAS core"
	}
	fmt.Fprintf(warnOutput, "anestar: %v; using %s (%s=%s chooses it without this check%s)\n",
		terr, next, BLASEnv, next, hint)
}
