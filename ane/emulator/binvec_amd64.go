//go:build !noasm

package emulator

import "github.com/anestar/anestar/half"

// On amd64 with AVX2 the four arithmetic ops of binRun run eight lanes at a time. Each lane is the
// same IEEE float32 operation as the scalar code (no fused multiply-add), so the bits are the same.

// binVVAVX2 computes dst[j] = a[j] op b[j] for j < n, n a multiple of 8; op is a vecOp.
//
//go:noescape
func binVVAVX2(op vecOp, dst, a, b *float32, n int)

// binVSAVX2 computes dst[j] = a[j] op s for j < n, n a multiple of 8 (vecRSub and vecRDiv: s op a[j]).
//
//go:noescape
func binVSAVX2(op vecOp, dst, a *float32, s float32, n int)

// hasBinVec reports whether the CPU and OS support AVX2; hasRoundVec whether F16C too, for the loops
// that round their results.
var (
	hasBinVec   = half.HasAVX2()
	hasRoundVec = hasBinVec && half.HasF16C()
)

// binVV runs the vector code on the longest prefix of whole blocks and returns its length.
func binVV(op vecOp, dst, a, b []float32) int {
	n := len(dst) &^ 7
	if !hasBinVec || n < binVecMin {
		return 0
	}
	_, _ = a[n-1], b[n-1]
	binVVAVX2(op, &dst[0], &a[0], &b[0], n)
	return n
}

// binVS is binVV with a scalar second operand (or first, for vecRSub and vecRDiv).
func binVS(op vecOp, dst, a []float32, s float32) int {
	n := len(dst) &^ 7
	if !hasBinVec || n < binVecMin {
		return 0
	}
	_ = a[n-1]
	binVSAVX2(op, &dst[0], &a[0], s, n)
	return n
}
