package floats

import (
	"math"
	"slices"
	"testing"
)

// values returns n values that exercise rounding: fractions, a negative, zero and huge ones.
func values(n int, seed float32) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = (float32(i%13)-6)*seed + 1/float32(i+3)
	}
	if n > 5 {
		d[5] = 0
	}
	return d
}

// The elementwise ops give, at every length (below, at and across the vector code's blocks), the
// bits of the plain float32 operation.
func TestElementwiseBits(t *testing.T) {
	ops := []struct {
		op Op
		f  func(a, b float32) float32
	}{
		{Add, func(a, b float32) float32 { return a + b }},
		{Sub, func(a, b float32) float32 { return a - b }},
		{Mul, func(a, b float32) float32 { return a * b }},
		{Div, func(a, b float32) float32 { return a / b }},
	}
	const f = float32(0.3)
	for _, n := range []int{1, 7, 31, 32, 33, 40, 77, 256} {
		for _, o := range ops {
			a, b := values(n, 0.7), values(n, -1.9)
			d := append([]float32(nil), a...)
			Apply(o.op, d, b)
			same(t, "Apply", o.op, n, d, func(i int) float32 { return o.f(a[i], b[i]) })
			d = append(d[:0], a...)
			ApplyScalar(o.op, d, f)
			same(t, "ApplyScalar", o.op, n, d, func(i int) float32 { return o.f(a[i], f) })
			d = append(d[:0], a...)
			ApplyScalarLeft(o.op, f, d)
			same(t, "ApplyScalarLeft", o.op, n, d, func(i int) float32 { return o.f(f, a[i]) })
		}
	}
}

func same(t *testing.T, fn string, op Op, n int, got []float32, want func(int) float32) {
	t.Helper()
	for i, g := range got {
		if w := want(i); math.Float32bits(g) != math.Float32bits(w) {
			t.Fatalf("%s(op %d) of %d values: [%d] = %v, want %v", fn, op, n, i, g, w)
		}
	}
}

func TestNegFillAxpy(t *testing.T) {
	x := []float32{1, -2, 0, 3.5}
	d := make([]float32, 4)
	Neg(d, x)
	if d[0] != -1 || d[1] != 2 || !math.Signbit(float64(d[2])) || d[3] != -3.5 {
		t.Errorf("Neg = %v", d)
	}
	Fill(d, 2)
	Axpy(0.5, x, d)
	if want := []float32{2.5, 1, 2, 3.75}; !slices.Equal(d, want) {
		t.Errorf("Axpy = %v, want %v", d, want)
	}
}

func TestReductions(t *testing.T) {
	d := []float32{1, -2, 4, 0.5}
	nan := float32(math.NaN())
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"Sum", Sum(d), 3.5},
		{"Mean", Mean(d), 0.875},
		{"Max", Max(d), 4},
		{"Min", Min(d), -2},
		{"Norm", Norm([]float32{3, 4}), 5},
		{"Dot", Dot(d, []float32{1, 1, 0.5, 2}), 2},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	for _, v := range [][]float32{{1, nan, 5}, {nan, 1, 5}} {
		if !math.IsNaN(Max(v)) || !math.IsNaN(Min(v)) {
			t.Errorf("Max %v, Min %v of %v: want NaN", Max(v), Min(v), v)
		}
	}
}
