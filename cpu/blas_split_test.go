package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/anestar/anestar/internal/par"
)

// splitLibrary is OpenBLAS set to split large products over goroutines for the test (skipped without
// OpenBLAS).
func splitLibrary(t *testing.T) *library {
	lib, err := loadLibrary("openblas")
	if err != nil {
		t.Skipf("OpenBLAS not available: %v", err)
	}
	old := lib.goSplit.Load()
	lib.goSplit.Store(true)
	t.Cleanup(func() { lib.goSplit.Store(old) })
	return lib
}

// Products large enough to be split over goroutines (in rows when m >= n, else in columns) match the
// float64 definition, with padded leading dimensions and every transposition, and the serial entry
// point gives the same values.
func TestSgemmSplit(t *testing.T) {
	lib := splitLibrary(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{257, 96, 200}, {96, 257, 200}, {33, 1000, 130}} {
		m, n, k := sz[0], sz[1], sz[2]
		if 2*m*n*k < splitFLOPs {
			t.Fatalf("%v is too small to split", sz)
		}
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				ar, ac := m, k
				if tA {
					ar, ac = k, m
				}
				br, bc := k, n
				if tB {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+3, bc+1, n+2
				a, b := randSlice(rng, ar*lda), randSlice(rng, br*ldb)
				c := randSlice(rng, m*ldc)
				c2 := append([]float32(nil), c...)
				want, scale := refSgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c, ldc)
				if err := lib.Sgemm(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c, ldc); err != nil {
					t.Fatal(err)
				}
				if err := lib.sgemmSerial(tA, tB, m, n, k, 0.5, a, lda, b, ldb, 0.25, c2, ldc); err != nil {
					t.Fatal(err)
				}
				for i := range m {
					for j := range n {
						got := float64(c[i*ldc+j])
						if d := math.Abs(got - want[i*n+j]); d > 1e-5*scale[i*n+j]+1e-30 {
							t.Fatalf("%v tA=%v tB=%v: C[%d,%d] = %v, want %v", sz, tA, tB, i, j, got, want[i*n+j])
						}
						if d := math.Abs(got - float64(c2[i*ldc+j])); d > 1e-5*scale[i*n+j]+1e-30 {
							t.Fatalf("%v tA=%v tB=%v: split %v, serial %v", sz, tA, tB, got, c2[i*ldc+j])
						}
					}
					for j := n; j < ldc; j++ { // the padding is untouched
						if c[i*ldc+j] != c2[i*ldc+j] {
							t.Fatalf("padding of row %d changed", i)
						}
					}
				}
			}
		}
	}
}

// Split products, and loops whose pieces run products (as the emulator's batched matmuls do), from
// several goroutines at once share the helpers and the core slots without deadlock: a goroutine that
// holds core slots never runs another loop's pieces, which may wait for those slots.
func TestSplitBesideLoopsOfProducts(t *testing.T) {
	lib := splitLibrary(t)
	const m, n, k = 256, 128, 160 // splits: 2mnk >= splitFLOPs
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(i%7) - 3
	}
	for i := range b {
		b[i] = float32(i%5) - 2
	}
	want := make([]float32, m*n)
	if err := lib.sgemmSerial(false, false, m, n, k, 1, a, k, b, n, 0, want, n); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for g := range 3 {
		go func() {
			c := make([][]float32, 4)
			for i := range c {
				c[i] = make([]float32, m*n)
			}
			for range 30 {
				if g == 0 { // a split product alone
					if err := lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c[0], n); err != nil {
						done <- err
						return
					}
					continue
				}
				// A loop whose pieces each run a product, which may split in turn.
				var errs [4]error
				par.For(4, 1, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						errs[i] = lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c[i], n)
					}
				})
				for _, err := range errs {
					if err != nil {
						done <- err
						return
					}
				}
			}
			for i := range c[0] {
				if c[0][i] != want[i] {
					done <- fmt.Errorf("goroutine %d: element %d = %v, want %v", g, i, c[0][i], want[i])
					return
				}
			}
			done <- nil
		}()
	}
	for range 3 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(2 * time.Minute): // far beyond the milliseconds this takes: a deadlock
			t.Fatal("split products beside loops of products did not finish: deadlock")
		}
	}
}

// A large product is computed in the same blocks whether every core slot is free, none is (another
// product or a busy machine holds them), or it comes through SgemmInTurn (SgemmSerial makes one call): the blocks are a
// function of the shape and GOMAXPROCS alone, so a BLAS whose sums depend on the block it is given
// (OpenBLAS's Haswell kernels) still gives the same bits under any load.
func TestSplitBlocksIndependentOfLoad(t *testing.T) {
	var mu sync.Mutex
	var calls [][3]int // each library call's m, n and the offset of its C in the product's
	var base *float32
	l := &library{name: "recording", sgemm: func(_, _ bool, m, n, _ int, _ float32, _ []float32, _ int,
		_ []float32, _ int, _ float32, c []float32, _ int) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, [3]int{m, n, int(uintptr(unsafe.Pointer(&c[0]))-uintptr(unsafe.Pointer(base))) / 4})
	}}
	l.goSplit.Store(true)
	blocks := func(m, n, k int, run func(a, b, c []float32) error) [][3]int {
		t.Helper()
		a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
		mu.Lock()
		calls, base = nil, &c[0]
		mu.Unlock()
		if err := run(a, b, c); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		got := slices.Clone(calls)
		slices.SortFunc(got, func(x, y [3]int) int { return x[2] - y[2] })
		return got
	}
	for _, sz := range [][3]int{{1024, 256, 64}, {256, 1024, 64}, {4096, 64, 32}, {40, 40, 40}} {
		m, n, k := sz[0], sz[1], sz[2]
		split := func(a, b, c []float32) error { return l.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n) }
		serial := func(a, b, c []float32) error { return l.sgemmInTurn(false, false, m, n, k, 1, a, k, b, n, 0, c, n) }
		oneCall := func(a, b, c []float32) error { return l.sgemmSerial(false, false, m, n, k, 1, a, k, b, n, 0, c, n) }
		free := blocks(m, n, k, split)
		held := 0 // take every slot the caller does not need: nothing else may run beside the product
		for tryAcquireCore() {
			held++
		}
		releaseCore()
		held--
		busy := blocks(m, n, k, split)
		for range held {
			releaseCore()
		}
		one := blocks(m, n, k, serial)
		if got := blocks(m, n, k, oneCall); len(got) != 1 || got[0] != [3]int{m, n, 0} {
			t.Errorf("%v: SgemmSerial made the calls %v, want one", sz, got)
		}
		_, pieces, _ := splitPieces(m, n, k)
		if len(free) != pieces || !slices.Equal(free, busy) || !slices.Equal(free, one) {
			t.Errorf("%v: blocks (m, n, offset of C) with free cores %v, with none %v, serial %v; want %d blocks, the same each time",
				sz, free, busy, one, pieces)
		}
	}
}
