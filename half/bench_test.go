package half

import (
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/internal/simdtest"
)

// benchN is a [768, 512] activation, the reference layer's size.
const benchN = 768 * 512

func benchValues() []float32 {
	rng := rand.New(rand.NewPCG(9, 10))
	x := make([]float32, benchN)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * 3)
	}
	return x
}

func BenchmarkEncodeF16(b *testing.B) {
	src, dst := benchValues(), make([]byte, 2*benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		if err := EncodeF16(dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeF16(b *testing.B) {
	src, dst := make([]byte, 2*benchN), make([]float32, benchN)
	if err := EncodeF16(src, benchValues()); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(4 * benchN)
	for b.Loop() {
		if err := DecodeF16(dst, src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkF32ToF16Scalar(b *testing.B) {
	x := benchValues()
	var sink uint16
	for i := 0; b.Loop(); i++ {
		sink ^= F32ToF16(x[i%benchN])
	}
	_ = sink
}

// BenchmarkEncodeF16OneCore measures the encode loop alone, without the
// goroutine split.
func BenchmarkEncodeF16OneCore(b *testing.B) {
	src, dst := benchValues(), make([]byte, 2*benchN)
	b.SetBytes(4 * benchN)
	for b.Loop() {
		encodeF16Range(dst, src)
	}
}

// BenchmarkDecodeF16OneCore measures the table decode loop alone.
func BenchmarkDecodeF16OneCore(b *testing.B) {
	src, dst := make([]byte, 2*benchN), make([]float32, benchN)
	encodeF16Range(src, benchValues())
	b.SetBytes(4 * benchN)
	for b.Loop() {
		decodeF16Range(dst, src)
	}
}

// BenchmarkWidths times the vector conversions on 4096 values (in cache, as a kernel's rows are) at
// each width the CPU runs: "256" is the F16C code alone, "512" the AVX-512 code with it.
func BenchmarkWidths(b *testing.B) {
	const n = 4096
	x, y, e := benchValues()[:n], make([]float32, n), make([]byte, 2*n)
	encodeF16Range(e, x)
	for _, c := range []struct {
		name string
		fn   func()
	}{{"round", func() { roundF16Vec(y, x) }}, {"encode", func() { encodeF16Vec(e, x) }}, {"decode", func() { decodeF16Vec(y, e) }}} {
		b.Run(c.name, func(b *testing.B) {
			simdtest.EachWidthBench(b, &use512, func(b *testing.B) {
				b.SetBytes(4 * n)
				for b.Loop() {
					c.fn()
				}
			})
		})
	}
}
