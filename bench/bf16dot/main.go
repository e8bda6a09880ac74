// Command bf16dot measures whether the fp16 products of the emulator's matmuls could run faster on
// AVX512-BF16's VDPBF16PS than on the fp32 FMAs the BLAS uses, on CPUs that have it and no AMX (the
// AMD EPYCs of these machines).
//
// An fp16 value x splits exactly into two bf16 values, hi (x with its low 16 bits cleared) and
// lo = x - hi (at most 3 significant bits), and x*y = hi*hi' + hi*lo' + lo*hi' + lo*lo' with every
// partial product exact in fp32: the exact split the AMX path (cpu.GemmF16) runs. VDPBF16PS zmm forms
// 32 bf16 products an instruction (16 lanes, a pair each) where VFMADD231PS zmm forms 16 fp32 ones,
// so an fp16 product costs four bf16 products against one FMA: the bf16 path pays only if
// VDPBF16PS runs at more than twice VFMADD231PS's rate. This command times both in loops of eight
// independent accumulators, registers only (the cores' peaks: packing and memory only lower the bf16
// path further), on one core, and prints the fp16 products a second each path can reach at best.
//
//	go run ./bench/bf16dot             # about a second
//	go run ./bench/bf16dot -rounds 5
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	rounds := flag.Int("rounds", 3, "measurements of each loop (the best is reported)")
	iters := flag.Int("iters", 100_000_000, "loop iterations a measurement (eight instructions each)")
	flag.Parse()
	if *rounds < 1 || *iters < 1 {
		fmt.Fprintln(os.Stderr, "bf16dot: -rounds and -iters must be at least 1")
		os.Exit(2)
	}
	r, err := measure(*rounds, *iters)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bf16dot:", err)
		os.Exit(1)
	}
	fmt.Print(r.String())
}

// result is the best time of an instruction of each loop.
type result struct {
	bf16NS, fmaNS float64 // nanoseconds an instruction
}

// String is the report: each instruction's rate and the fp16 products a second it can reach.
func (r result) String() string {
	bf16 := 32 / r.bf16NS // bf16 products a nanosecond = G a second
	fma := 16 / r.fmaNS
	return fmt.Sprintf("VDPBF16PS zmm    %.3f ns an instruction  %6.1f G bf16 products/s  -> %5.1f G fp16 products/s (4 each, the exact split)\n"+
		"VFMADD231PS zmm  %.3f ns an instruction  %6.1f G fp32 products/s  -> %5.1f G fp16 products/s (1 each)\n"+
		"the bf16 path at best: %.2fx the fp32 path's fp16 products on one core\n",
		r.bf16NS, bf16, bf16/4, r.fmaNS, fma, fma, bf16/4/fma)
}
