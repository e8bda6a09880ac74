package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/internal/simdtest"
)

// TestVectorBits: every op, with and without rounding, in both forms, gives the scalar formula's bits
// (NaN as NaN) on the prefix it reports, which is the longest whole number of blocks of eight, from
// unaligned starts, over infinities, signed zeros, subnormals and NaN; and nothing past that prefix.
func TestVectorBits(t *testing.T) {
	if !Has() {
		t.Skip("no vector code on this machine")
	}
	simdtest.EachWidth(t, &use512, vectorBits)
}

// vectorBits is TestVectorBits for the form of the vector code in use.
func vectorBits(t *testing.T) {
	val := testValues(rand.New(rand.NewPCG(3, 4)), 100, 6)
	scalar := func(op Op, a, b float32) float32 {
		switch op % Round {
		case Add:
			return a + b
		case Sub:
			return a - b
		case Mul:
			return a * b
		case Div:
			return a / b
		case RSub:
			return b - a
		}
		return b / a
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	for _, op := range []Op{Add, Sub, Mul, Div, RSub, RDiv, Add + Round, Sub + Round, Mul + Round, Div + Round, RSub + Round, RDiv + Round} {
		if op >= Round && !HasRound() {
			continue
		}
		for _, n := range []int{7, 31, 32, 33, 39, 47, 100, 121, 1027} { // 47 and 121: a last block of eight after blocks of sixteen
			for off := range 3 {
				a, b := make([]float32, n+off), make([]float32, n+off)
				for i := range a {
					a[i], b[i] = val(), val()
				}
				s := val()
				for _, form := range []string{"VV", "VS"} {
					if form == "VV" && (op%Round == RSub || op%Round == RDiv) {
						continue
					}
					dst := make([]float32, n+off)
					for i := range dst {
						dst[i] = 42
					}
					var k int
					if form == "VV" {
						k = VV(op, dst[off:], a[off:], b[off:])
					} else {
						k = VS(op, dst[off:], a[off:], s)
					}
					if want := n &^ 7; (n >= MinRun && k != want) || (n < MinRun && k != 0) {
						t.Fatalf("%s op %d n %d: did %d elements", form, op, n, k)
					}
					for j := range n {
						bj := s
						if form == "VV" {
							bj = b[off+j]
						}
						want := scalar(op, a[off+j], bj)
						if op >= Round {
							want = half.RoundF16(want)
						}
						if j >= k {
							want = 42
						}
						if got := dst[off+j]; !same(got, want) {
							t.Fatalf("%s op %d n %d off %d: element %d = %v, want %v", form, op, n, off, j, got, want)
						}
					}
				}
			}
		}
	}
}

// TestRowsAxpyBits: RowsAxpy gives the scalar loop's bits (NaN as NaN) on the prefix it reports, the
// longest whole number of blocks of eight, for the 64-, 32- and 8-lane paths, leading dimensions past
// the row, one term or many, over infinities, signed zeros, subnormals and NaN; nothing past the prefix.
func TestRowsAxpyBits(t *testing.T) {
	if !Has() {
		t.Skip("no vector code on this machine")
	}
	r := rand.New(rand.NewPCG(5, 6))
	val := testValues(r, 10, 8)
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	for _, n := range []int{7, 8, 31, 32, 40, 63, 64, 72, 100, 129, 200} {
		for _, k := range []int{1, 2, 8, 33} {
			ldb := n + r.IntN(5)
			x, b := make([]float32, k), make([]float32, (k-1)*ldb+n)
			for i := range x {
				x[i] = val()
			}
			for i := range b {
				b[i] = val()
			}
			if k == 2 && n == 32 { // a sum of -0 terms stays +0 (it starts at +0), as the loop's
				x[0], x[1], b[0], b[ldb] = -1, 1, 0, float32(math.Copysign(0, -1))
			}
			dst := make([]float32, n)
			for i := range dst {
				dst[i] = 42
			}
			done := RowsAxpy(dst, x, b, ldb)
			if done != n&^7 {
				t.Fatalf("n %d, k %d: %d lanes done, want %d", n, k, done, n&^7)
			}
			for i := range n {
				if i >= done {
					if dst[i] != 42 {
						t.Fatalf("n %d, k %d: lane %d past the prefix written", n, k, i)
					}
					continue
				}
				var s float32
				for j := range k {
					s = s + float32(x[j]*b[j*ldb+i])
				}
				if !same(dst[i], s) {
					t.Fatalf("n %d, k %d, ldb %d: lane %d = %v (%#x), the loop's %v (%#x)", n, k, ldb, i, dst[i], math.Float32bits(dst[i]), s, math.Float32bits(s))
				}
			}
		}
	}
}

// TestRowsAxpyF16Bits: RowsAxpyF16 gives the scalar loop's bits over B's fp16 values (half.F16ToF32,
// exhaustively tested there) and x's fp16 values, for every block size and random bit patterns of B
// (infinities, NaN, subnormal halves among them) against normal, special and subnormal x.
func TestRowsAxpyF16Bits(t *testing.T) {
	if !HasRowsF16() {
		t.Skip("no vector conversions and FMA on this machine")
	}
	r := rand.New(rand.NewPCG(7, 8))
	val := testValues(r, 10, 8)
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	for _, n := range []int{7, 8, 24, 31, 32, 40, 64, 72, 100, 129, 344} {
		for _, k := range []int{1, 2, 8, 33, 172} {
			ldb := n + r.IntN(5)
			x, b := make([]float32, k), make([]uint16, (k-1)*ldb+n)
			for i := range x {
				x[i] = half.RoundF16(val()) // fp16 values, as the contract asks: exact products
			}
			for i := range b {
				b[i] = uint16(r.Uint32())
				if r.IntN(4) > 0 { // mostly ordinary weights: exponents near 1
					b[i] = b[i]&0x83ff | uint16(13+r.IntN(4))<<10
				}
			}
			dst := make([]float32, n)
			done := RowsAxpyF16(dst, x, b, ldb)
			if done != n&^7 {
				t.Fatalf("n %d, k %d: %d lanes done, want %d", n, k, done, n&^7)
			}
			for i := range done {
				var s float32
				for j := range k {
					s = s + float32(x[j]*half.F16ToF32(b[j*ldb+i]))
				}
				if !same(dst[i], s) {
					t.Fatalf("n %d, k %d, ldb %d: lane %d = %v, the loop's %v", n, k, ldb, i, dst[i], s)
				}
			}
		}
	}
}

// testValues returns a source of test values: normal ones of the given scale, and one in every a
// special (signed zeros, infinities, NaN, subnormals, fp16's largest, 1).
func testValues(r *rand.Rand, scale float64, every int) func() float32 {
	special := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-40, -3e-39, 65504, 1}
	return func() float32 {
		if r.IntN(every) == 0 {
			return special[r.IntN(len(special))]
		}
		return float32(r.NormFloat64() * scale)
	}
}

// TestMax: Max equals the scalar loop's maximum (NaN ignored; a zero's sign aside) over rows of every
// length around the vector blocks, with NaN, infinities, signed zeros, all-NaN and all-masked rows.
func TestMax(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	val := testValues(r, 50, 5)
	for trial := range 2000 {
		n := r.IntN(300)
		a := make([]float32, n)
		for i := range a {
			a[i] = val()
			if trial%7 == 0 {
				a[i] = []float32{float32(math.NaN()), -65504}[trial%2]
			}
		}
		want := float32(math.Inf(-1))
		for _, v := range a {
			if v > want {
				want = v
			}
		}
		if got := Max(a); got != want {
			t.Fatalf("n %d: Max = %v, the loop's %v", n, got, want)
		}
	}
}

// BenchmarkWidths times a rounded product over 4096 values (in cache, as a chain's pieces are) at each
// width the CPU runs: "256" is the AVX2 code alone, "512" the AVX-512 code with it.
func BenchmarkWidths(b *testing.B) {
	if !HasRound() {
		b.Skip("no vector code on this machine")
	}
	const n = 4096
	x, y, d := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i%13)*0.37, float32(i%7)*1.1
	}
	simdtest.EachWidthBench(b, &use512, func(b *testing.B) {
		b.SetBytes(4 * n)
		for b.Loop() {
			VV(Mul+Round, d, x, y)
		}
	})
}
