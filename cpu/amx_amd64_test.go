//go:build !noasm

package cpu

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkAMXKernel is the tile kernel alone on packed operands in cache: the ceiling of GemmF16,
// counting fp16 flops (a quarter of the bf16 work).
func BenchmarkAMXKernel(b *testing.B) {
	needAMX(b)
	for _, chunks := range []int{4, 16, 64} {
		b.Run(fmt.Sprintf("k%d", 16*chunks), func(b *testing.B) {
			pa, pb, c := make([]uint32, chunks*512), make([]uint32, chunks*1024), make([]float32, 32*32)
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			amxConfig(&amxTileCfg)
			for b.Loop() {
				amxKernel(&pa[0], &pb[0], &c[0], 32*4, chunks, 2048, 4096, false, false)
			}
			amxRelease()
			b.ReportMetric(2*32*32*16*float64(chunks)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkAMXKernel3 is the tile kernel in GemmF32's format alone on packed operands in cache (with and without
// the third products), counting fp32 flops.
func BenchmarkAMXKernel3(b *testing.B) {
	needAMX(b)
	for _, third := range []bool{true, false} {
		for _, chunks := range []int{4, 16, 64} {
			b.Run(fmt.Sprintf("k%d/third=%v", 16*chunks, third), func(b *testing.B) {
				pa, pb, c := make([]uint32, chunks*1024), make([]uint32, chunks*1536), make([]float32, 32*32)
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				amxConfig(&amxTileCfg)
				for b.Loop() {
					amxKernel(&pa[0], &pb[0], &c[0], 32*4, chunks, 4096, 6144, false, third)
				}
				amxRelease()
				b.ReportMetric(2*32*32*16*float64(chunks)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
