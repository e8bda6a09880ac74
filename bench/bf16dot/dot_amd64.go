//go:build amd64 && !noasm

package main

import (
	"errors"
	"time"

	"github.com/anestar/anestar/internal/cpuid"
)

// dotBF16 runs one VDPBF16PS zmm: acc[j] += a[2j]*b[2j] + a[2j+1]*b[2j+1] in bf16 pairs.
//
//go:noescape
func dotBF16(acc *[16]float32, a, b *[32]uint16)

// loopBF16 runs n rounds of eight independent VDPBF16PS zmm.
func loopBF16(n int)

// loopFMA runs n rounds of eight independent VFMADD231PS zmm.
func loopFMA(n int)

// usable reports whether the CPU has AVX512-BF16 and the OS saves the AVX-512 state.
func usable() bool {
	f := cpuid.X86()
	return f.OSXSAVE && f.AVX512F && f.AVX512BF16 && f.XCR0&cpuid.XCR0AVX512 == cpuid.XCR0AVX512
}

func measure(rounds, iters int) (result, error) {
	if !usable() {
		return result{}, errors.New("this CPU (or OS) has no AVX512-BF16: nothing to measure")
	}
	best := func(loop func(int)) float64 {
		b := 0.0
		for range rounds {
			t := time.Now()
			loop(iters)
			ns := float64(time.Since(t).Nanoseconds()) / float64(8*iters)
			if b == 0 || ns < b {
				b = ns
			}
		}
		return b
	}
	return result{bf16NS: best(loopBF16), fmaNS: best(loopFMA)}, nil
}
