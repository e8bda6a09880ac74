package cpuid

//go:noescape
func cpuid(eaxIn, ecxIn uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv0() (eax uint32)

// x86 are this CPU's features, read once.
var x86 = readX86()

// readX86 reads the CPUID and XGETBV flags.
func readX86() X86Features {
	var f X86Features
	top, _, _, _ := cpuid(0, 0)
	_, _, c1, _ := cpuid(1, 0)
	f.FMA = c1&(1<<12) != 0
	f.OSXSAVE = c1&(1<<27) != 0
	f.AVX = c1&(1<<28) != 0
	f.F16C = c1&(1<<29) != 0
	if f.OSXSAVE { // XGETBV faults unless the OS enabled XSAVE
		f.XCR0 = xgetbv0()
	}
	if top >= 7 {
		sub, b7, _, d7 := cpuid(7, 0)
		f.AVX2 = b7&(1<<5) != 0
		f.AVX512F = b7&(1<<16) != 0
		f.AVX512DQ = b7&(1<<17) != 0
		f.AVX512CD = b7&(1<<28) != 0
		f.AVX512BW = b7&(1<<30) != 0
		f.AVX512VL = b7&(1<<31) != 0
		f.AMXBF16 = d7&(1<<22) != 0
		f.AMXTile = d7&(1<<24) != 0
		if sub >= 1 {
			a71, _, _, _ := cpuid(7, 1)
			f.AVX512BF16 = a71&(1<<5) != 0
		}
	}
	return f
}
