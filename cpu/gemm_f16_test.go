package cpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/half"
)

// needAMX skips t where GemmF16 cannot run.
func needAMX(t testing.TB) {
	t.Helper()
	if !AMXUsable() {
		t.Skip("AMX not usable here (needs amx_tile and amx_bf16, an OS that grants tile data, no noasm tag)")
	}
}

// checkGemmResult fails t when an element of C (m x n, row stride ldc) is off its float64 value want
// by more than an fp32 sgemm's bound — each of the k sums rounds once in fp32: 4(k+2) units of fp32
// roundoff of scale (sum |a*b| + |beta*c|) — or, with nanPadding, when the padding between C's rows,
// NaN before the product, was written.
func checkGemmResult(t *testing.T, what string, m, n, k int, c []float32, ldc int, want, scale []float64, nanPadding bool) {
	t.Helper()
	for i := range m {
		for j := range n {
			got := c[i*ldc+j]
			tol := 4 * float64(k+2) * 0x1p-24 * scale[i*n+j]
			if d := math.Abs(float64(got) - want[i*n+j]); !(d <= tol) {
				t.Fatalf("%s: C[%d,%d] = %g, want %g ± %g", what, i, j, got, want[i*n+j], tol)
			}
		}
		for j := n; nanPadding && j < ldc && i*ldc+j < len(c); j++ {
			if !math.IsNaN(float64(c[i*ldc+j])) {
				t.Fatalf("%s: padding C[%d,%d] written", what, i, j)
			}
		}
	}
}

// randF16 returns n random fp16 values, float32-held, with magnitudes over 2^-12..2^4 and every
// significand bit in use.
func randF16(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		v := (rng.Float64()*2 - 1) * math.Ldexp(1, rng.IntN(16)-12)
		s[i] = half.RoundF16(float32(v))
	}
	return s
}

func TestGemmF16(t *testing.T) {
	needAMX(t)
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {17, 9, 33}, {31, 33, 17}, {64, 65, 63}, {32, 64, 16}, {64, 32, 300}, {45, 70, 517}, {300, 33, 1030}}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, sz := range sizes {
		m, n, k := sz[0], sz[1], sz[2]
		for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			for _, pad := range []int{0, 3} {
				transA, transB := tr[0], tr[1]
				ar, ac := storedShape(transA, m, k)
				br, bc := storedShape(transB, k, n)
				lda, ldb, ldc := ac+pad, bc+pad, n+pad
				a := randF16(rng, (ar-1)*lda+ac)
				b := randF16(rng, (br-1)*ldb+bc)
				c := make([]float32, (m-1)*ldc+n)
				for i := range c {
					c[i] = float32(math.NaN()) // must be overwritten, never read
				}
				want, scale := refSgemm(transA, transB, m, n, k, 1, a, lda, b, ldb, 0, nil, ldc)
				if err := GemmF16(transA, transB, m, n, k, a, lda, b, ldb, c, ldc); err != nil {
					t.Fatalf("%dx%dx%d tA=%v tB=%v: %v", m, n, k, transA, transB, err)
				}
				checkGemmResult(t, fmt.Sprintf("%dx%dx%d tA=%v tB=%v pad %d", m, n, k, transA, transB, pad), m, n, k, c, ldc, want, scale, true)
			}
		}
	}
}

// TestGemmF16Exact checks products whose sums are exact in fp32 (small integers): every partial
// product of the split must be there, bit for bit.
func TestGemmF16Exact(t *testing.T) {
	needAMX(t)
	m, n, k := 19, 21, 40
	rng := rand.New(rand.NewPCG(1, 2))
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(rng.IntN(2047) - 1023) // 11 significant bits: hi and lo both non-zero
	}
	for i := range b {
		b[i] = float32(rng.IntN(2047)-1023) / 1024
	}
	c := make([]float32, m*n)
	if err := GemmF16(false, false, m, n, k, a, k, b, n, c, n); err != nil {
		t.Fatal(err)
	}
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				s += float64(a[i*k+p]) * float64(b[p*n+j])
			}
			if float64(c[i*n+j]) != s {
				t.Fatalf("C[%d,%d] = %g, want exactly %g", i, j, c[i*n+j], s)
			}
		}
	}
}

// TestGemmF16NotF16 checks that every value outside the contract is reported, in either operand,
// either orientation and any position (the last element, in an edge tile).
func TestGemmF16NotF16(t *testing.T) {
	needAMX(t)
	bad := map[string]float32{
		"21 significant bits": 1 + 0x1p-20,
		"+inf":                float32(math.Inf(1)),
		"-inf":                float32(math.Inf(-1)),
		"NaN":                 float32(math.NaN()),
		"fp16 NaN 0x7C01":     half.F16ToF32(0x7C01), // its payload is in bits hi would clear
		"float32 denormal":    0x1p-140,
	}
	m, n, k := 20, 18, 35
	rng := rand.New(rand.NewPCG(3, 4))
	for name, v := range bad {
		for _, tr := range []bool{false, true} {
			for operand := range 2 {
				a, b := randF16(rng, m*k), randF16(rng, k*n)
				x := [][]float32{a, b}[operand]
				x[len(x)-1] = v
				c := make([]float32, m*n)
				lda, ldb := k, n
				if tr {
					lda, ldb = m, k
				}
				err := GemmF16(tr, tr, m, n, k, a, lda, b, ldb, c, n)
				if !errors.Is(err, ErrNotF16) {
					t.Fatalf("%s, trans %v, operand %d: err = %v, want ErrNotF16", name, tr, operand, err)
				}
			}
		}
	}
}

func TestGemmF16Errors(t *testing.T) {
	needAMX(t)
	s := make([]float32, 12)
	if err := GemmF16(false, false, 3, 4, 5, s, 5, s, 4, s, 4); err == nil {
		t.Fatal("short A: no error")
	}
	if err := GemmF16(false, false, 2, 2, 0, s, 1, s, 2, s, 2); err != nil {
		t.Fatal(err)
	}
}

// TestSgemmF16 checks SgemmF16 against float64 on whatever it runs here: fp16 operands on AMX, other
// scalings and operands outside GemmF16's contract (an infinity) on the BLAS, large products split
// over goroutines.
func TestSgemmF16(t *testing.T) {
	t.Logf("SgemmF16 runs on %s", F16GemmName())
	rng := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][3]int{{3, 5, 7}, {70, 45, 33}, {256, 200, 130}} {
		m, n, k := sz[0], sz[1], sz[2]
		for _, ab := range [][2]float32{{1, 0}, {-0.5, 1}} {
			for _, withInf := range []bool{false, true} {
				a, b := randF16(rng, m*k), randF16(rng, k*n)
				if withInf {
					a[k+1] = float32(math.Inf(1)) // row 1 of C becomes ±inf or NaN
				}
				c := randF16(rng, m*n)
				want, scale := refSgemm(false, false, m, n, k, ab[0], a, k, b, n, ab[1], c, n)
				if err := SgemmF16(false, false, m, n, k, ab[0], a, k, b, n, ab[1], c, n); err != nil {
					t.Fatal(err)
				}
				for i, got := range c {
					w := want[i]
					if math.IsNaN(w) || math.IsInf(w, 0) {
						if !(math.IsNaN(w) && math.IsNaN(float64(got)) || float64(got) == w) {
							t.Fatalf("%v alpha, beta %v inf %v: C[%d] = %g, want %g", sz, ab, withInf, i, got, w)
						}
						continue
					}
					tol := 4 * float64(k+2) * 0x1p-24 * scale[i]
					if d := math.Abs(float64(got) - w); !(d <= tol) {
						t.Fatalf("%v alpha, beta %v inf %v: C[%d] = %g, want %g ± %g", sz, ab, withInf, i, got, w, tol)
					}
				}
			}
		}
	}
}

func TestParseAMXEnv(t *testing.T) {
	for v, want := range map[string]string{"": AMXAuto, "auto": AMXAuto, " AUTO ": AMXAuto, "f16": AMXF16, "F16": AMXF16, "off": AMXOff, "Off": AMXOff} {
		if got, err := ParseAMXEnv(v); err != nil || got != want {
			t.Errorf("ParseAMXEnv(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := ParseAMXEnv("no"); err == nil {
		t.Error("ParseAMXEnv(\"no\"): no error")
	}
}

// TestF16LibraryReference checks that the reference gemm keeps the fp16 products: the emulator's
// exactness tests need its one fixed order.
func TestF16LibraryReference(t *testing.T) {
	ref, err := loadLibrary(ReferenceBLAS)
	if err != nil {
		t.Fatal(err)
	}
	if f16Library(ref) != ref {
		t.Fatal("the fp16 products leave the reference gemm")
	}
	if gn, err := loadLibrary("gonum"); err == nil && AMXUsable() && amxAllowed() && f16Library(gn) == gn {
		t.Fatal("AMX usable and allowed, but the fp16 products stay on gonum")
	}
}
