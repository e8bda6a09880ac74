package ane

import (
	"testing"

	"github.com/anestar/anestar/mil"
)

// BenchmarkWriteRegion writes a weight matrix into a packed fp32 input the way the language model
// stages its weights (dim 256, hidden 704, 1024 columns of activations beside them): [704, 256]
// transposed and [256, 704] as it is, beside 1024 columns of activations. It reports ms per write.
//
//	go test -run - -bench WriteRegion ./ane
func BenchmarkWriteRegion(b *testing.B) {
	const d, h, n = 256, 704, 1024
	for _, tc := range []struct {
		name       string
		transposed bool
	}{{"transposed", true}, {"straight", false}} {
		b.Run(tc.name, func(b *testing.B) {
			sf, err := NewSurface("x", mil.Tensor(mil.FP32, 1, d, 1, n+3*h), NewHeapMemory(d*(n+3*h)*4))
			if err != nil {
				b.Fatal(err)
			}
			w := make([]float32, d*h)
			for i := range w {
				w[i] = float32(i%97) / 7
			}
			for range b.N {
				if err := sf.WriteRegion(0, d, n+h, h, w, tc.transposed); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/write")
		})
	}
}
