package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// However many goroutines multiply at once, through Sgemm (split or not) and SgemmSerial, no more
// library calls run at the same time than GOMAXPROCS, every product is right, and a split product uses
// only the slots free when it starts.
func TestSgemmCoreSlots(t *testing.T) {
	gonum, err := loadLibrary("gonum")
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, most atomic.Int32
	var calls atomic.Int64
	lib := &library{name: "counting", sgemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32,
		lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		now := inFlight.Add(1)
		for {
			old := most.Load()
			if now <= old || most.CompareAndSwap(old, now) {
				break
			}
		}
		calls.Add(1)
		time.Sleep(200 * time.Microsecond) // hold the slot long enough for the others to pile up
		gonum.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		inFlight.Add(-1)
	}}
	lib.goSplit.Store(true)
	procs := runtime.GOMAXPROCS(0)
	const m, n, k = 256, 128, 160 // 2*m*n*k >= splitFLOPs: Sgemm may split it
	if 2*m*n*k < splitFLOPs {
		t.Fatal("the product is too small to split")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	a, b := randSlice(rng, m*k), randSlice(rng, k*n)
	want, scale := refSgemm(false, false, m, n, k, 1, a, k, b, n, 0, make([]float32, m*n), n)
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 4 * procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := make([]float32, m*n)
			for i := range 5 {
				var err error
				if (g+i)%2 == 0 {
					err = lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
				} else {
					err = lib.sgemmSerial(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
				}
				if err != nil {
					errs <- err.Error()
					return
				}
				for j, v := range c {
					if math.Abs(float64(v)-want[j]) > 1e-5*scale[j]+1e-30 {
						errs <- "wrong product"
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if got := most.Load(); int(got) > procs {
		t.Fatalf("%d library calls ran at once, want at most GOMAXPROCS = %d", got, procs)
	}
	if calls.Load() < int64(4*procs*5) {
		t.Fatalf("%d library calls for %d products", calls.Load(), 4*procs*5)
	}
	// Split products of every span give back every slot, however the pieces round.
	for span := 2 * splitAlign; span <= 6*splitAlign; span++ {
		n := splitFLOPs/(2*span*k) + 1
		c := make([]float32, span*n)
		if err := lib.Sgemm(false, false, span, n, k, 1, a, k, randSlice(rng, k*n), n, 0, c, n); err != nil {
			t.Fatal(err)
		}
		// A helper hands its slot back just after its last piece, which may be after Sgemm returns: wait
		// for it (a slot that is never given back still fails).
		for wait := time.Now().Add(2 * time.Second); len(cores) != 0 && time.Now().Before(wait); {
			time.Sleep(100 * time.Microsecond)
		}
		if len(cores) != 0 {
			t.Fatalf("after a product of %d rows, %d core slots are still held", span, len(cores))
		}
	}
	// Alone, with every slot free, a large product is split.
	if procs > 1 {
		calls.Store(0)
		c := make([]float32, m*n)
		if err := lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n); err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got < 2 || got > int64(piecesPerCore*procs) {
			t.Fatalf("a product alone made %d library calls, want it split in 2 to %d", got, piecesPerCore*procs)
		}
	}
}

func TestForeignCallsCounted(t *testing.T) {
	var during int32
	f := foreign(func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {
		during = foreignCalls.Load()
	})
	before := foreignCalls.Load()
	f(false, false, 1, 1, 1, 1, nil, 1, nil, 1, 0, nil, 1)
	if during != before+1 || foreignCalls.Load() != before {
		t.Fatalf("foreign calls: %d before, %d during, %d after", before, during, foreignCalls.Load())
	}
}

// A product that starts with every other core slot held runs on the caller alone; the slots that come
// free while it runs take over the pieces still to go, and the pieces are the ones a product with free
// slots has (the bits do not depend on when the slots came free).
func TestSplitProductTakesSlotsFreedLater(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	if procs < 2 {
		t.Skip("one core: nothing to hand over")
	}
	gonum, err := loadLibrary("gonum")
	if err != nil {
		t.Fatal(err)
	}
	const m, n, k = 1024, 128, 160
	var held int
	for tryAcquireCore() { // every slot, then one back for the product's caller
		held++
	}
	releaseCore()
	held--
	var inFlight, most atomic.Int32
	var mu sync.Mutex
	var blocks [][2]int
	var once sync.Once
	lib := &library{name: "slow", sgemm: func(transA, transB bool, m, n, k int, alpha float32, a []float32,
		lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		now := inFlight.Add(1)
		for old := most.Load(); now > old && !most.CompareAndSwap(old, now); old = most.Load() {
		}
		once.Do(func() { // the first piece is under way: the held slots come free
			for range held {
				releaseCore()
			}
		})
		mu.Lock()
		blocks = append(blocks, [2]int{m, len(a)})
		mu.Unlock()
		time.Sleep(50 * time.Millisecond) // long beside a helper's wake-up, even on a loaded machine
		gonum.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		inFlight.Add(-1)
	}}
	lib.goSplit.Store(true)
	rng := rand.New(rand.NewPCG(15, 16))
	a, b := randSlice(rng, m*k), randSlice(rng, k*n)
	c := make([]float32, m*n)
	if err := lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n); err != nil {
		t.Fatal(err)
	}
	want, scale := refSgemm(false, false, m, n, k, 1, a, k, b, n, 0, make([]float32, m*n), n)
	for j, v := range c {
		if math.Abs(float64(v)-want[j]) > 1e-5*scale[j]+1e-30 {
			t.Fatalf("c[%d] = %v, want %v", j, v, want[j])
		}
	}
	size, pieces, _ := splitPieces(m, n, k)
	if len(blocks) != pieces {
		t.Fatalf("%d library calls, want the %d pieces of %d rows", len(blocks), pieces, size)
	}
	if most.Load() < 2 {
		t.Errorf("the pieces after the slots came free ran on the caller alone")
	}
}
