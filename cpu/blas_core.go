package cpu

import "github.com/anestar/anestar/internal/cpuid"

// OpenBLAS picks its kernels ("core") when it loads, from the CPU's family and model. A release older
// than the CPU does not know its model and falls back to its slowest x86-64 kernels (Prescott, SSE3):
// OpenBLAS 0.3.21 does so on Sapphire and Emerald Rapids, 3.4x slower here than its SkylakeX kernels.
// When the user has not set OPENBLAS_CORETYPE, the loader therefore names the core itself, from the
// features the CPU has and the operating system has enabled (cpuid.X86, the one CPUID and XGETBV
// reading of the project), never from the model number.
//
// Only names that OpenBLAS 0.3.21 (Debian 12's) accepts in OPENBLAS_CORETYPE are chosen: SkylakeX for
// AVX-512, Haswell for AVX2 with FMA. Its force_coretype lists "Cooperlake" but stops its search one
// entry short of it (fixed in 0.3.22), and "SapphireRapids" exists only from 0.3.24; both reuse
// SkylakeX's sgemm kernels (they add bf16 sbgemm ones), so for sgemm SkylakeX is as fast there.

// openBLASCoreFor returns the OpenBLAS core (an OPENBLAS_CORETYPE value) for a CPU with features f,
// or "" to leave the choice to OpenBLAS. A core is chosen only when the OS has enabled the register
// state its instructions use: forcing one the CPU or OS cannot run dies of SIGILL, which nothing catches.
// AVX-512 BF16 does not change the choice (see the comment above).
func openBLASCoreFor(f cpuid.X86Features) string {
	if !f.OSXSAVE || !f.AVX || !f.AVX2 || !f.FMA || f.XCR0&cpuid.XCR0AVX != cpuid.XCR0AVX {
		return ""
	}
	if f.AVX512F && f.AVX512DQ && f.AVX512CD && f.AVX512BW && f.AVX512VL && f.XCR0&cpuid.XCR0AVX512 == cpuid.XCR0AVX512 {
		return "SkylakeX"
	}
	return "Haswell"
}

// OpenBLASCores lists the OPENBLAS_CORETYPE values whose sgemm kernels this CPU and operating system
// can run (forcing any other dies of SIGILL): Prescott (SSE3) on every x86-64 CPU, Haswell and Zen
// with AVX2 and FMA, SkylakeX with AVX-512; none elsewhere. The determinism tests run each.
func OpenBLASCores() []string {
	f := cpuid.X86()
	if f == (cpuid.X86Features{}) {
		return nil
	}
	cores := []string{"Prescott"}
	switch openBLASCoreFor(f) {
	case "SkylakeX":
		cores = append(cores, "Haswell", "Zen", "SkylakeX")
	case "Haswell":
		cores = append(cores, "Haswell", "Zen")
	}
	return cores
}
