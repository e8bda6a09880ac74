package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// gemmShapes are the products the emulator runs for the language model at its default size (dim 256,
// hidden 704, 8 sequences of 128 side by side, heads of 64) and at 768/2048 with sequences of 512,
// with the transpose flags it uses.
var gemmShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"lm_qkvo_256x1024x256_tA", true, false, 256, 1024, 256},
	{"lm_dx_256x1024x256", false, false, 256, 1024, 256},
	{"lm_ffn_704x1024x256_tA", true, false, 704, 1024, 256},
	{"lm_ffn_down_256x1024x704", false, false, 256, 1024, 704},
	{"lm_scores_128x128x64_tA", true, false, 128, 128, 64},
	{"lm_values_128x64x128_tB", false, true, 128, 64, 128},
	{"big_768x512x768_tA", true, false, 768, 512, 768},
	{"big_2048x512x768_tA", true, false, 2048, 512, 768},
	{"big_768x512x2048", false, false, 768, 512, 2048},
}

// BenchmarkGemmF16 compares GemmF16 on AMX with the BLAS's sgemm on one goroutine (the library
// called directly, without Sgemm's split over goroutines), shape by shape, both on the same fp16
// operands; run with OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 for OpenBLAS's best kernels.
func BenchmarkGemmF16(b *testing.B) {
	lib, err := loadLibrary("openblas")
	if err != nil {
		lib, _ = loadLibrary("gonum")
	}
	for _, s := range gemmShapes {
		rng := rand.New(rand.NewPCG(1, 1))
		x, y := randF16(rng, s.m*s.k), randF16(rng, s.k*s.n)
		lda, ldb := s.k, s.n
		if s.transA {
			lda = s.m
		}
		if s.transB {
			ldb = s.k
		}
		c := make([]float32, s.m*s.n)
		flops := 2 * float64(s.m*s.n*s.k)
		b.Run(s.name+"/amx", func(b *testing.B) {
			needAMX(b)
			for b.Loop() {
				if err := GemmF16(s.transA, s.transB, s.m, s.n, s.k, x, lda, y, ldb, c, s.n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(fmt.Sprintf("%s/%s", s.name, lib.name), func(b *testing.B) {
			for b.Loop() {
				lib.sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, c, s.n)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
