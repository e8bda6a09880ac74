package cpu

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// gemmShapes are the products the emulator runs for the language model at its default size (dim 256,
// hidden 704, 8 sequences of 128 side by side, heads of 64), the host's for it (weight gradients over
// the 1024 tokens of a group, the classifier's per sequence), and the emulator's at 768/2048 with
// sequences of 512, with the transpose flags they use.
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
	{"lm_dw_256x256x1024_tB", false, true, 256, 256, 1024},
	{"lm_dw_704x256x1024_tB", false, true, 704, 256, 1024},
	{"lm_dw_256x704x1024_tB", false, true, 256, 704, 1024},
	{"lm_cls_dx_128x256x1024", false, false, 128, 256, 1024},
	{"lm_cls_dw_1024x256x128_tA", true, false, 1024, 256, 128},
	{"head_scores_256x256x64_tA", true, false, 256, 256, 64},
	{"head_values_64x256x256_tB", false, true, 64, 256, 256},
	{"head_scores_512x512x64_tA", true, false, 512, 512, 64},
	{"head_values_64x512x512_tB", false, true, 64, 512, 512},
	{"big_768x512x768_tA", true, false, 768, 512, 768},
	{"big_2048x512x768_tA", true, false, 2048, 512, 768},
	{"big_768x512x2048", false, false, 768, 512, 2048},
}

// gemmShape is one of gemmShapes with its leading dimensions and flop count.
type gemmShape struct {
	name           string
	transA, transB bool
	m, n, k        int
	lda, ldb       int
	flops          float64
}

// benchGemms runs, for each of gemmShapes, the named products on operands from gen (the same for
// all of them) and the BLAS's sgemm on one goroutine (the library called directly, without Sgemm's
// split over goroutines), reporting GFLOP/s.
func benchGemms(b *testing.B, gen func(*rand.Rand, int) []float32, products map[string]func(s gemmShape, x, y, c []float32) error) {
	lib, err := loadLibrary("openblas")
	if err != nil {
		lib, _ = loadLibrary("gonum")
	}
	names := slices.Sorted(maps.Keys(products))
	for _, g := range gemmShapes {
		s := gemmShape{name: g.name, transA: g.transA, transB: g.transB, m: g.m, n: g.n, k: g.k, lda: g.k, ldb: g.n,
			flops: 2 * float64(g.m*g.n*g.k)}
		if s.transA {
			s.lda = s.m
		}
		if s.transB {
			s.ldb = s.k
		}
		rng := rand.New(rand.NewPCG(1, 1))
		x, y, c := gen(rng, s.m*s.k), gen(rng, s.k*s.n), make([]float32, s.m*s.n)
		run := func(name string, f func() error) {
			b.Run(s.name+"/"+name, func(b *testing.B) {
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(s.flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
		for _, name := range names {
			if AMXUsable() {
				run(name, func() error { return products[name](s, x, y, c) })
			}
		}
		run(lib.name, func() error {
			lib.sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, x, s.lda, y, s.ldb, 0, c, s.n)
			return nil
		})
	}
}

// BenchmarkGemmF16 compares GemmF16 on AMX with the BLAS's sgemm on the same fp16 operands; run with
// OPENBLAS_CORETYPE=SkylakeX OPENBLAS_NUM_THREADS=1 for OpenBLAS's best kernels.
func BenchmarkGemmF16(b *testing.B) {
	benchGemms(b, randF16, map[string]func(s gemmShape, x, y, c []float32) error{
		"amx": func(s gemmShape, x, y, c []float32) error {
			return GemmF16(s.transA, s.transB, s.m, s.n, s.k, x, s.lda, y, s.ldb, c, s.n)
		},
	})
}

// BenchmarkGemmF32 compares GemmF32 on AMX with the BLAS's sgemm on float32 operands (all three parts
// in use), and GemmF32 on fp16 values (no third part: its products are skipped) as amx_f16values.
func BenchmarkGemmF32(b *testing.B) {
	gemm := func(s gemmShape, x, y, c []float32) error {
		return GemmF32(s.transA, s.transB, s.m, s.n, s.k, x, s.lda, y, s.ldb, 0, c, s.n)
	}
	benchGemms(b, randF32, map[string]func(s gemmShape, x, y, c []float32) error{"amx": gemm})
	benchGemms(b, randF16, map[string]func(s gemmShape, x, y, c []float32) error{"amx_f16values": gemm})
}

// BenchmarkSgemmShapes runs Sgemm and SgemmF16 as callers do, split over goroutines, on gemmShapes
// and the 384/1024/6/256 layer's shapes, float32 and fp16 operands.
func BenchmarkSgemmShapes(b *testing.B) {
	shapes := append(slices.Clone(gemmShapes), []struct {
		name           string
		transA, transB bool
		m, n, k        int
	}{
		{"small_384x256x384_tA", true, false, 384, 256, 384},
		{"small_1024x256x384_tA", true, false, 1024, 256, 384},
		{"small_384x256x1024", false, false, 384, 256, 1024},
		{"small_dw_384x384x256_tB", false, true, 384, 384, 256},
	}...)
	for _, s := range shapes {
		rng := rand.New(rand.NewPCG(1, 1))
		lda, ldb := s.k, s.n
		if s.transA {
			lda = s.m
		}
		if s.transB {
			ldb = s.k
		}
		c := make([]float32, s.m*s.n)
		flops := 2 * float64(s.m*s.n*s.k)
		for _, v := range []struct {
			name string
			gen  func(*rand.Rand, int) []float32
			gemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) error
		}{{"f32", randF32, Sgemm}, {"f16", randF16, SgemmF16}} {
			x, y := v.gen(rng, s.m*s.k), v.gen(rng, s.k*s.n)
			b.Run(s.name+"/"+v.name, func(b *testing.B) {
				for b.Loop() {
					if err := v.gemm(s.transA, s.transB, s.m, s.n, s.k, 1, x, lda, y, ldb, 0, c, s.n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
