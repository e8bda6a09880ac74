package ane

import (
	"testing"

	"github.com/anestar/anestar/mil"
)

// BenchmarkStageWeights writes the weights of the language model's 4 layers into their packed
// kernel inputs the way its optimizer step does (dim 256, hidden 704, 8 sequences of 128 beside them):
// per layer wq, wk, wv, wo transposed into the attention forward and backward inputs, w1 and w3
// transposed and w2 as it is into the FFN forward and backward inputs. Each matrix and surface is its
// own memory, as in a run, so most of it is out of cache. It reports ms per staging, into fp16 inputs
// (the emulator's default) and fp32 ones (its --fp32).
//
//	go test -run - -bench StageWeights ./ane
func BenchmarkStageWeights(b *testing.B) {
	for _, dt := range []mil.DType{mil.FP16, mil.FP32} {
		b.Run(dt.String(), func(b *testing.B) { benchStageWeights(b, dt) })
	}
}

func benchStageWeights(b *testing.B, dt mil.DType) {
	const layers, d, h, n = 4, 256, 704, 1024
	type write struct {
		sf         *Surface
		col, ncol  int
		w          []float32
		transposed bool
	}
	var writes []write
	surface := func(cols int) *Surface {
		sf, err := NewSurface("x", mil.Tensor(dt, 1, d, 1, cols), NewHeapMemory(d*cols*dt.Bits()/8))
		if err != nil {
			b.Fatal(err)
		}
		return sf
	}
	matrix := func(k int) []float32 {
		w := make([]float32, k)
		for i := range w {
			w[i] = float32(i%97) / 7
		}
		return w
	}
	for range layers {
		attn := [4][]float32{matrix(d * d), matrix(d * d), matrix(d * d), matrix(d * d)}
		for _, first := range []int{2 * n, 5 * n} { // forward: xn, rope; backward: dx2, q, k, v, rope
			sf := surface(first + 4*d)
			for i, w := range attn {
				writes = append(writes, write{sf, first + i*d, d, w, true})
			}
		}
		ffn := [3][]float32{matrix(h * d), matrix(h * d), matrix(d * h)}
		for _, first := range []int{n, n + 2*h*n/d} { // forward: xn; backward: dy, h1 h3
			sf := surface(first + 3*h)
			for i, w := range ffn {
				writes = append(writes, write{sf, first + i*h, h, w, i < 2})
			}
		}
	}
	for range b.N {
		for _, w := range writes {
			if err := w.sf.WriteRegion(0, d, w.col, w.ncol, w.w, w.transposed); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/staging")
}
