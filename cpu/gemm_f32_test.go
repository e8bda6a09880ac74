package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randF32 returns n random float32 values with magnitudes over 2^-12..2^4 and every significand bit
// in use.
func randF32(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32((rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(16)-12))
	}
	return s
}

// TestGemmF32 checks GemmF32 against float64 with an fp32 sgemm's bound, over edge tiles, every
// transpose, padded leading dimensions, beta 0 (C never read) and 1, and operands with and without
// third parts (fp16 values have none: the third products are skipped).
func TestGemmF32(t *testing.T) {
	needAMX(t)
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {31, 33, 17}, {64, 65, 63}, {32, 64, 16}, {64, 32, 300}, {45, 70, 517}, {300, 33, 1030}, {96, 96, 2100}}
	if testing.Short() {
		sizes = sizes[:8]
	}
	rng := rand.New(rand.NewPCG(17, 18))
	run := 0
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, pad := range []int{0, 3} {
				for _, beta := range []float32{0, 1} {
					kinds := run % 3 // both float32; A fp16 values; both fp16 values
					run++
					transA, transB := tr[0], tr[1]
					ar, ac := storedShape(transA, m, k)
					br, bc := storedShape(transB, k, n)
					lda, ldb, ldc := ac+pad, bc+pad, n+pad
					a, b := randF32(rng, (ar-1)*lda+ac), randF32(rng, (br-1)*ldb+bc)
					if kinds >= 1 {
						a = randF16(rng, len(a))
					}
					if kinds == 2 {
						b = randF16(rng, len(b))
					}
					c := randF32(rng, (m-1)*ldc+n)
					if beta == 0 {
						for i := range c {
							c[i] = float32(math.NaN()) // must be overwritten, never read
						}
					}
					want, scale := refSgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, beta, c, ldc)
					if err := GemmF32(transA, transB, m, n, k, a, lda, b, ldb, beta, c, ldc); err != nil {
						t.Fatalf("%dx%dx%d tA=%v tB=%v: %v", m, n, k, transA, transB, err)
					}
					checkGemmResult(t, fmt.Sprintf("%dx%dx%d tA=%v tB=%v pad %d beta %g kinds %d", m, n, k, transA, transB, pad, beta, kinds),
						m, n, k, c, ldc, want, scale, beta == 0)
				}
			}
		}
	}
}

// TestGemmF32Accuracy compares GemmF32's error with the float64 product to a BLAS's (the reference
// gemm's, a plain loop that rounds once per k) on random float32 operands: the root mean square
// error, relative to sum |a*b|, must stay within 4 times the BLAS's (six fp32 sums per k instead of
// one suggest about √6), and the largest error within 8 times the BLAS's largest.
func TestGemmF32Accuracy(t *testing.T) {
	needAMX(t)
	ref, err := loadLibrary(ReferenceBLAS)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, sz := range [][3]int{{64, 64, 256}, {64, 64, 2048}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := randF32(rng, m*k), randF32(rng, k*n)
		want, scale := refSgemm(false, false, m, n, k, 1, a, k, b, n, 0, nil, n)
		amx, blas := make([]float32, m*n), make([]float32, m*n)
		if err := GemmF32(false, false, m, n, k, a, k, b, n, 0, amx, n); err != nil {
			t.Fatal(err)
		}
		ref.sgemm(false, false, m, n, k, 1, a, k, b, n, 0, blas, n)
		stats := func(c []float32) (rms, worst float64) {
			for i, v := range c {
				e := math.Abs(float64(v)-want[i]) / scale[i]
				rms += e * e
				worst = max(worst, e)
			}
			return math.Sqrt(rms / float64(len(c))), worst
		}
		ra, wa := stats(amx)
		rb, wb := stats(blas)
		t.Logf("k %d: relative error rms %.3g (BLAS %.3g, ratio %.2f), largest %.3g (BLAS %.3g)", k, ra, rb, ra/rb, wa, wb)
		if ra > 4*rb || wa > 8*wb {
			t.Errorf("k %d: AMX error rms %.3g, largest %.3g; the BLAS's %.3g, %.3g", k, ra, wa, rb, wb)
		}
	}
}

// TestGemmF32NotF32 checks that every value outside the contract is reported, in either operand,
// either orientation and the last position (an edge tile), and that with beta 1 C is left as it was.
func TestGemmF32NotF32(t *testing.T) {
	needAMX(t)
	bad := map[string]float32{
		"+inf":             float32(math.Inf(1)),
		"-inf":             float32(math.Inf(-1)),
		"NaN":              float32(math.NaN()),
		"float32 denormal": 0x1p-140,
		"bf16 overflow":    math.MaxFloat32,
		"denormal m":       float32(0x1p-120 * (1 + 0x1p-12)), // m = 2^-132: a bf16 denormal
	}
	m, n, k := 20, 18, 35
	rng := rand.New(rand.NewPCG(3, 4))
	for name, v := range bad {
		for _, tr := range []bool{false, true} {
			for operand := range 2 {
				a, b := randF32(rng, m*k), randF32(rng, k*n)
				x := [][]float32{a, b}[operand]
				x[len(x)-1] = v
				c := randF32(rng, m*n)
				c0 := slices.Clone(c)
				lda, ldb := k, n
				if tr {
					lda, ldb = m, k
				}
				err := GemmF32(tr, tr, m, n, k, a, lda, b, ldb, 1, c, n)
				if !errors.Is(err, ErrNotF32) {
					t.Fatalf("%s, trans %v, operand %d: err = %v, want ErrNotF32", name, tr, operand, err)
				}
				if !slices.Equal(c, c0) {
					t.Fatalf("%s, trans %v, operand %d: C changed on ErrNotF32 with beta 1", name, tr, operand)
				}
			}
		}
	}
	// Small normal values whose parts are zero or normal are inside the contract.
	a, b := []float32{0x1p-100, 0}, []float32{0x1p-20, 3}
	c := []float32{0}
	if err := GemmF32(false, false, 1, 1, 2, a, 2, b, 1, 0, c, 1); err != nil || c[0] != 0x1p-120 {
		t.Fatalf("2^-100 * 2^-20 = %g, %v; want 2^-120", c[0], err)
	}
}

func TestGemmF32Errors(t *testing.T) {
	needAMX(t)
	s := make([]float32, 12)
	if err := GemmF32(false, false, 3, 4, 5, s, 5, s, 4, 0, s, 4); err == nil {
		t.Fatal("short A: no error")
	}
	if err := GemmF32(false, false, 2, 2, 1, s, 1, s, 2, 0.5, s, 2); err == nil {
		t.Fatal("beta 0.5: no error")
	}
	if err := GemmF32(false, false, 2, 2, 0, s, 1, s, 2, 0, s, 2); err != nil {
		t.Fatal(err)
	}
}

// TestAMXSplit checks large products through the AMX libraries' Sgemm, split over goroutines into
// independent AMX products, against float64 in both formats, one pass over k and several, beta 0 and
// 1; and with an infinity in the first or the last columns of B, which the piece holding it sends to
// the BLAS (C as float64 has it, infinities and NaNs included).
func TestAMXSplit(t *testing.T) {
	needAMX(t)
	base, err := loadLibrary("gonum")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	sizes := [][3]int{{300, 260, 200}, {64, 2000, 300}, {200, 96, 1000}}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, f := range []*amxFormat{f16Format, f32Format} {
			lib, gen := amxWrap(base, f), randF32
			if f == f16Format {
				gen = randF16
			}
			for _, beta := range []float32{0, 1} {
				for _, inf := range []int{-1, 0, n - 1} { // none, in the first column of B, in the last
					what := fmt.Sprintf("%dx%dx%d three %v beta %g inf in column %d", m, n, k, f.three, beta, inf)
					a, b, c := gen(rng, m*k), gen(rng, k*n), randF32(rng, m*n)
					if inf >= 0 {
						b[inf*k+k/2] = float32(math.Inf(1))
					}
					want, scale := refSgemm(false, true, m, n, k, 1, a, k, b, k, beta, c, n)
					if err := lib.Sgemm(false, true, m, n, k, 1, a, k, b, k, beta, c, n); err != nil {
						t.Fatal(err)
					}
					for i, got := range c {
						w := want[i]
						if math.IsInf(w, 0) || math.IsNaN(w) {
							if !(math.IsNaN(w) && math.IsNaN(float64(got)) || float64(got) == w) {
								t.Fatalf("%s: C[%d] = %g, want %g", what, i, got, w)
							}
						} else if d := math.Abs(float64(got) - w); !(d <= 4*float64(k+2)*0x1p-24*scale[i]) {
							t.Fatalf("%s: C[%d] = %g, want %g", what, i, got, w)
						}
					}
				}
			}
		}
	}
}
