// Package cpuid is the CPU feature detection of anestar: one CPUID and XGETBV reading, made once at
// start, that every package with vector assembly asks (half's F16C conversions, internal/vec,
// internal/fastexp, internal/transpose, cpu's BLAS core choice, AMX kernels and optimizer loops), so
// every vector path asks the same question the same way. [X86] returns the flags; [HasF16C] and
// [HasAVX2] check a feature together with the register state the operating system saves ([XCR0AVX],
// [XCR0AVX512]). A leaf: it imports nothing of anestar's.
package cpuid

// X86Features are the CPUID and XGETBV flags of an x86-64 CPU that the vector code of anestar reads. A flag says what the CPU offers; XCR0 says which register state the operating
// system saves, without which the instructions fault: [HasF16C] and [HasAVX2] check both.
type X86Features struct {
	AVX, FMA, F16C, OSXSAVE               bool   // CPUID.1:ECX bits 28, 12, 29, 27
	AVX2                                  bool   // CPUID.7.0:EBX bit 5
	AVX512F, AVX512DQ, AVX512CD, AVX512BW bool   // CPUID.7.0:EBX bits 16, 17, 28, 30
	AVX512VL                              bool   // CPUID.7.0:EBX bit 31
	AVX512BF16                            bool   // CPUID.7.1:EAX bit 5
	AMXBF16, AMXTile                      bool   // CPUID.7.0:EDX bits 22, 24
	XCR0                                  uint32 // XGETBV(0): the register state the OS saves; 0 without OSXSAVE
}

// XCR0 state components: SSE (1) and AVX (2) registers; AVX-512 opmask (5), upper halves of ZMM0-15 (6)
// and ZMM16-31 (7).
const (
	XCR0AVX    = 1<<1 | 1<<2                  // SSE and AVX (YMM) state
	XCR0AVX512 = XCR0AVX | 1<<5 | 1<<6 | 1<<7 // AVX state plus opmask and all of ZMM0-31
)

// X86 returns this CPU's features, read once at start; the zero value on other architectures.
func X86() X86Features { return x86 }

var (
	// hasAVX reports whether the CPU has AVX and the OS saves its YMM state.
	hasAVX = x86.OSXSAVE && x86.AVX && x86.XCR0&XCR0AVX == XCR0AVX
	// hasF16C reports whether the CPU and OS support AVX with F16C.
	hasF16C = hasAVX && x86.F16C
	// hasAVX2 reports whether the CPU and OS support AVX2.
	hasAVX2 = hasAVX && x86.AVX2
	// hasAVX512 reports whether the CPU has AVX-512F and the OS saves the opmask and ZMM state.
	hasAVX512 = x86.OSXSAVE && x86.AVX512F && x86.XCR0&XCR0AVX512 == XCR0AVX512
)

// HasF16C reports whether the CPU and the operating system support the F16C conversions (with AVX).
func HasF16C() bool { return hasF16C }

// HasAVX2 reports whether the CPU and the operating system support AVX2, for callers with their own
// AVX2 assembly.
func HasAVX2() bool { return hasAVX2 }

// HasAVX512 reports whether the CPU and the operating system support AVX-512F (512-bit arithmetic, and
// the fp16 conversions on ZMM registers), for callers with their own AVX-512 assembly.
func HasAVX512() bool { return hasAVX512 }
