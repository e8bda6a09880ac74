package cpu

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
)

// forEachBLAS runs f on every implementation that loads here, skipping the
// ones that do not with the reason.
func forEachBLAS(t *testing.T, f func(t *testing.T, lib BLAS)) {
	for _, name := range append(slices.Clone(blasOrder), ReferenceBLAS) {
		t.Run(name, func(t *testing.T) {
			lib, err := LoadBLAS(name)
			if err != nil {
				if name == "gonum" || name == ReferenceBLAS {
					t.Fatal(err)
				}
				t.Skipf("%s not available here: %v", name, err)
			}
			if lib.Name() != name {
				t.Fatalf("Name() = %q, want %q", lib.Name(), name)
			}
			f(t, lib)
		})
	}
	// GemmF32's path, with the products it does not take (other scalings, operands outside its
	// contract) on gonum.
	t.Run("amx", func(t *testing.T) {
		needAMX(t)
		base, err := loadLibrary("gonum")
		if err != nil {
			t.Fatal(err)
		}
		f(t, amxWrap(base, f32Format)) // whatever AMXEnv says: this is the path's own test
	})
}

// refSgemm computes alpha*op(A)*op(B) + beta*C in float64 straight from
// the definition, and for each element the bound sum |alpha*a*b| + |beta*c|
// that scales its rounding error.
func refSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) (want, scale []float64) {
	at := func(i, p int) float64 {
		if transA {
			return float64(a[p*lda+i])
		}
		return float64(a[i*lda+p])
	}
	bt := func(p, j int) float64 {
		if transB {
			return float64(b[j*ldb+p])
		}
		return float64(b[p*ldb+j])
	}
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, sa float64
			for p := range k {
				s += at(i, p) * bt(p, j)
				sa += math.Abs(at(i, p) * bt(p, j))
			}
			cij := 0.0
			if beta != 0 {
				cij = float64(beta) * float64(c[i*ldc+j])
			}
			want[i*n+j] = float64(alpha)*s + cij
			scale[i*n+j] = math.Abs(float64(alpha))*sa + math.Abs(cij)
		}
	}
	return want, scale
}

// storedShape is the stored rows and columns of an operand whose op is rows x cols.
func storedShape(trans bool, rows, cols int) (int, int) {
	if trans {
		return cols, rows
	}
	return rows, cols
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.Float64()*2 - 1)
	}
	return s
}

func TestSgemmConformance(t *testing.T) {
	// at most tinyMACs multiply-adds: the fixed-order loop; one column or row above it: the library's sgemv where it has one
	sizes := [][3]int{{1, 1, 1}, {1, 7, 3}, {5, 1, 4}, {3, 5, 7}, {17, 9, 33}, {64, 65, 63}, {2, 3, 0}, {40, 1, 33}, {7, 1, 300}, {1, 40, 33}, {1, 9, 300}}
	forEachBLAS(t, func(t *testing.T, lib BLAS) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, sz := range sizes {
			m, n, k := sz[0], sz[1], sz[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				for _, pad := range []int{0, 3} {
					for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}, {2, 0.7}, {0, 0.5}} {
						transA, transB := tr[0], tr[1]
						alpha, beta := ab[0], ab[1]
						ar, ac := storedShape(transA, m, k)
						br, bc := storedShape(transB, k, n)
						lda, ldb, ldc := max(1, ac+pad), max(1, bc+pad), max(1, n+pad)
						a := randSlice(rng, max(0, (ar-1)*lda+ac))
						b := randSlice(rng, max(0, (br-1)*ldb+bc))
						c := randSlice(rng, m*ldc)
						if beta == 0 {
							for i := range c {
								c[i] = float32(math.NaN()) // beta == 0 must ignore C
							}
						}
						orig := append([]float32(nil), c...)
						want, scale := refSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
						if err := lib.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); err != nil {
							t.Fatalf("%dx%dx%d tA=%v tB=%v: %v", m, n, k, transA, transB, err)
						}
						for i := range m {
							for j := range ldc {
								got := c[i*ldc+j]
								if j >= n {
									if math.Float32bits(got) != math.Float32bits(orig[i*ldc+j]) {
										t.Fatalf("%dx%dx%d: padding C[%d,%d] changed", m, n, k, i, j)
									}
									continue
								}
								tol := 4 * float64(k+2) * 0x1p-24 * scale[i*n+j]
								if d := math.Abs(float64(got) - want[i*n+j]); !(d <= tol) {
									t.Fatalf("%dx%dx%d tA=%v tB=%v lda+%d alpha=%g beta=%g: C[%d,%d] = %g, want %g",
										m, n, k, transA, transB, pad, alpha, beta, i, j, got, want[i*n+j])
								}
							}
						}
					}
				}
			}
		}
	})
}

func TestSgemmErrors(t *testing.T) {
	s := make([]float32, 12)
	cases := []struct {
		name                   string
		tA, tB                 bool
		m, n, k, lda, ldb, ldc int
		lenA, lenB, lenC       int
		want                   string
	}{
		{"negative m", false, false, -1, 2, 2, 2, 2, 2, 12, 12, 12, "m = -1"},
		{"huge k", false, false, 2, 2, math.MaxInt32 + 1, 2, 2, 2, 12, 12, 12, "k = "},
		{"lda small", false, false, 2, 3, 4, 3, 3, 3, 12, 12, 12, "lda = 3"},
		{"lda small transposed", true, false, 4, 3, 2, 3, 3, 3, 12, 12, 12, "lda = 3"},
		{"ldb small", false, true, 2, 3, 4, 4, 3, 3, 12, 12, 12, "ldb = 3"},
		{"ldc small", false, false, 2, 3, 2, 2, 3, 2, 12, 12, 12, "ldc = 2"},
		{"short A", false, false, 3, 2, 4, 4, 2, 2, 11, 12, 12, "A has 11"},
		{"short B", false, false, 2, 4, 3, 3, 4, 4, 12, 11, 12, "B has 11"},
		{"short C", false, false, 3, 4, 1, 1, 4, 4, 12, 12, 11, "C has 11"},
	}
	forEachBLAS(t, func(t *testing.T, lib BLAS) {
		for _, tc := range cases {
			c := make([]float32, tc.lenC)
			for i := range c {
				c[i] = 7
			}
			err := lib.Sgemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, s[:tc.lenA], tc.lda, s[:tc.lenB], tc.ldb, 0, c, tc.ldc)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "cpu.Sgemm") {
				t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
			}
			for _, v := range c {
				if v != 7 {
					t.Fatalf("%s: C changed on error", tc.name)
				}
			}
		}
	})
}

// resetBLAS forgets the current selection so the next use reads BLASEnv
// again.
func resetBLAS() {
	current.Store(nil)
	currentOnce = sync.Once{}
}

func TestBLASSelection(t *testing.T) {
	defer resetBLAS()

	resetBLAS()
	t.Setenv(BLASEnv, "gonum")
	if BLASName() != "gonum" {
		t.Fatalf("%s=gonum: BLASName() = %q", BLASEnv, BLASName())
	}

	resetBLAS()
	t.Setenv(BLASEnv, "nosuch")
	if BLASName() != "none" {
		t.Fatalf("%s=nosuch: BLASName() = %q, want none", BLASEnv, BLASName())
	}
	err := Sgemm(false, false, 1, 1, 1, 1, []float32{1}, 1, []float32{1}, 1, 0, []float32{0}, 1)
	if err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("Sgemm with a bad %s: err = %v", BLASEnv, err)
	}
	if _, err := CurrentBLAS(); err == nil {
		t.Fatal("CurrentBLAS with a bad env: no error")
	}

	if err := SetBLAS("gonum"); err != nil {
		t.Fatal(err)
	}
	c := []float32{0}
	if err := Sgemm(false, false, 1, 1, 1, 2, []float32{3}, 1, []float32{4}, 1, 0, c, 1); err != nil || c[0] != 24 {
		t.Fatalf("Sgemm after SetBLAS(gonum) = %v, %v", c, err)
	}
	if err := SetBLAS("bogus"); err == nil || BLASName() != "gonum" {
		t.Fatalf("SetBLAS(bogus): err = %v, BLASName = %q (want an error and gonum kept)", err, BLASName())
	}

	resetBLAS()
	t.Setenv(BLASEnv, "")
	if err := SetBLAS("auto"); err != nil {
		t.Fatal(err)
	}
	want := "gonum"
	for _, n := range blasOrder {
		if _, err := LoadBLAS(n); err == nil {
			want = n
			break
		}
	}
	if BLASName() != want {
		t.Fatalf("auto chose %q, want %q (first that loads)", BLASName(), want)
	}
}

func TestBLASThreads(t *testing.T) {
	defer resetBLAS()
	if err := SetBLAS("openblas"); err != nil {
		t.Skipf("OpenBLAS not available here: %v", err)
	}
	if os.Getenv("OPENBLAS_NUM_THREADS") == "" && os.Getenv("OMP_NUM_THREADS") == "" && BLASThreads() != 1 {
		t.Errorf("OpenBLAS loaded with %d threads, want 1 when the environment does not size it", BLASThreads())
	}
	old := BLASThreads()
	defer SetBLASThreads(old)
	// Threads can be added after loading single-threaded, and the library's own threads then compute
	// products (the sizes OpenBLAS does spread over threads) correctly.
	SetBLASThreads(2)
	if BLASThreads() != 2 {
		t.Fatalf("after SetBLASThreads(2): BLASThreads() = %d", BLASThreads())
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const m, n, k = 300, 200, 100
	a, b, c := randSlice(rng, m*k), randSlice(rng, k*n), make([]float32, m*n)
	want, scale := refSgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
	if err := Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n); err != nil {
		t.Fatal(err)
	}
	for i, v := range c {
		if math.Abs(float64(v)-want[i]) > 1e-5*scale[i]+1e-30 {
			t.Fatalf("2 threads: C[%d] = %v, want %v", i, v, want[i])
		}
	}
	SetBLASThreads(1)
	if BLASThreads() != 1 {
		t.Fatalf("after SetBLASThreads(1): BLASThreads() = %d", BLASThreads())
	}
}

func benchSgemm(b *testing.B, lib BLAS) {
	const m, n, k = 2048, 768, 512
	rng := rand.New(rand.NewPCG(7, 8))
	a, bm, c := randSlice(rng, m*k), randSlice(rng, k*n), make([]float32, m*n)
	b.SetBytes(0)
	b.ResetTimer()
	for b.Loop() {
		if err := lib.Sgemm(false, false, m, n, k, 1, a, k, bm, n, 0, c, n); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*m*n*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkSgemm2048x768x512(b *testing.B) {
	for _, name := range blasOrder {
		b.Run(name, func(b *testing.B) {
			lib, err := LoadBLAS(name)
			if err != nil {
				b.Skipf("%s not available: %v", name, err)
			}
			benchSgemm(b, lib)
		})
	}
}

// The reference gemm sums every element in one fixed order whatever the product's blocking or transpose
// flags — the property the emulator's exactness tests rely on: a product computed whole, by row blocks, by
// column blocks, or transposed with its operands swapped (C^T = B^T A^T) gives the same bits.
func TestReferenceSgemmFixedOrder(t *testing.T) {
	lib, err := LoadBLAS(ReferenceBLAS)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 13, 11, 37
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
	}
	for i := range b {
		b[i] = float32(rng.NormFloat64())
	}
	whole := make([]float32, m*n)
	if err := lib.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, whole, n); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got []float32) {
		t.Helper()
		for i := range whole {
			if math.Float32bits(got[i]) != math.Float32bits(whole[i]) {
				t.Fatalf("%s: element %d = %v, whole product %v", what, i, got[i], whole[i])
			}
		}
	}
	rows := make([]float32, m*n)
	for r0 := 0; r0 < m; r0 += 4 {
		r1 := min(r0+4, m)
		if err := lib.Sgemm(false, false, r1-r0, n, k, 1, a[r0*k:], k, b, n, 0, rows[r0*n:], n); err != nil {
			t.Fatal(err)
		}
	}
	check("row blocks", rows)
	cols := make([]float32, m*n)
	for c0 := 0; c0 < n; c0 += 3 {
		c1 := min(c0+3, n)
		if err := lib.Sgemm(false, false, m, c1-c0, k, 1, a, k, b[c0:], n, 0, cols[c0:], n); err != nil {
			t.Fatal(err)
		}
	}
	check("column blocks", cols)
	ct := make([]float32, n*m) // C^T = B^T A^T, with A and B read through the transpose flags
	if err := lib.Sgemm(true, true, n, m, k, 1, b, n, a, k, 0, ct, m); err != nil {
		t.Fatal(err)
	}
	tr := make([]float32, m*n)
	for i := range m {
		for j := range n {
			tr[i*n+j] = ct[j*m+i]
		}
	}
	check("transposed", tr)
}
