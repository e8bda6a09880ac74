package cpu

// CPU feature detection for the amd64 assembly in this package and in the emulator: one CPUID and
// XGETBV, so every vector path asks the same question the same way.

//go:noescape
func cpuid(eaxIn, ecxIn uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv0() (eax uint32)

var (
	// hasAVX reports whether the CPU has AVX and the OS saves its YMM state.
	hasAVX = detectAVX()
	// hasF16C reports whether the CPU and OS support AVX with F16C.
	hasF16C = hasAVX && cpuidECX1()&(1<<29) != 0
	// hasAVX2 reports whether the CPU and OS support AVX2.
	hasAVX2 = hasAVX && maxLeaf() >= 7 && cpuidEBX7()&(1<<5) != 0
)

// HasAVX2 reports whether the CPU and the operating system support AVX2, for callers with their own
// AVX2 assembly.
func HasAVX2() bool { return hasAVX2 }

func maxLeaf() uint32 {
	max, _, _, _ := cpuid(0, 0)
	return max
}

func cpuidECX1() uint32 {
	_, _, c, _ := cpuid(1, 0)
	return c
}

func cpuidEBX7() uint32 {
	_, b, _, _ := cpuid(7, 0)
	return b
}

func detectAVX() bool {
	const osxsave, avx = 1 << 27, 1 << 28
	c := cpuidECX1()
	if c&osxsave == 0 || c&avx == 0 {
		return false
	}
	return xgetbv0()&6 == 6 // the OS saves XMM and YMM state
}
