//go:build amd64 && !noasm

package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/half"
)

// bf16 is the bf16 value of f's high 16 bits (exact when f's low 16 bits are zero).
func bf16(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }

// split is the exact split of an fp16 value x: hi (x with its low 16 bits cleared) and lo = x - hi.
func split(x float32) (hi, lo float32) {
	hi = math.Float32frombits(math.Float32bits(x) &^ 0xffff)
	return hi, x - hi
}

// The hand-written bytes are VDPBF16PS: every lane adds its two pairs' products, checked where
// every sum is exact whatever the instruction's internal order (small integers).
func TestDotBF16Encoding(t *testing.T) {
	if !usable() {
		t.Skip("no AVX512-BF16 here")
	}
	var acc [16]float32
	var a, b [32]uint16
	want := make([]float64, 16)
	for j := range 16 {
		acc[j] = float32(j - 8)
		x0, x1, y0, y1 := float32(j+1), float32(-2*j), float32(3-j), float32(j%5)
		a[2*j], a[2*j+1], b[2*j], b[2*j+1] = bf16(x0), bf16(x1), bf16(y0), bf16(y1)
		want[j] = float64(acc[j]) + float64(x0)*float64(y0) + float64(x1)*float64(y1)
	}
	dotBF16(&acc, &a, &b)
	for j := range 16 {
		if float64(acc[j]) != want[j] {
			t.Fatalf("lane %d: %v, want %v", j, acc[j], want[j])
		}
	}
}

// The exact split's four partial products, two VDPBF16PS pairs a lane ((hi, lo).(hi', hi') then
// (hi, lo).(lo', lo')), give x*y of fp16 values x and y to within fp32's rounding of the two sums:
// the products the bf16 path would compute (the float64 product is exact).
func TestSplitProducts(t *testing.T) {
	if !usable() {
		t.Skip("no AVX512-BF16 here")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	f16 := func() float32 { return half.RoundF16(float32(rng.NormFloat64() * 4)) }
	for range 200 {
		var acc [16]float32
		var a, b1, b2 [32]uint16
		xs, ys := make([]float32, 16), make([]float32, 16)
		for j := range 16 {
			xs[j], ys[j] = f16(), f16()
			xh, xl := split(xs[j])
			yh, yl := split(ys[j])
			a[2*j], a[2*j+1] = bf16(xh), bf16(xl)
			b1[2*j], b1[2*j+1] = bf16(yh), bf16(yh)
			b2[2*j], b2[2*j+1] = bf16(yl), bf16(yl)
		}
		dotBF16(&acc, &a, &b1)
		dotBF16(&acc, &a, &b2)
		for j := range 16 {
			want := float64(xs[j]) * float64(ys[j])
			if d := math.Abs(float64(acc[j]) - want); d > math.Abs(want)*0x1p-22 {
				t.Fatalf("%v * %v: %v, want %v (off by %g)", xs[j], ys[j], acc[j], want, d)
			}
		}
	}
}
