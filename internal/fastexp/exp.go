// Package fastexp is e^x in float32 without a trip through float64, for the emulator's exp ops (whose
// bits it defines) and the host's softmax cross-entropy: Exp32 within 2 ulp, and Shifted, which applies
// it to a slice eight lanes at a time on AVX2 with the same bits.
package fastexp

import "math"

// Exp32 is e^x in float32 to within 2 ulp, without a trip through float64: Cody-Waite range reduction
// x = n*ln2 + r with |r| <= ln2/2 and a degree-6 polynomial for e^r, scaled by 2^n through the exponent.
func Exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > expOver:
		return float32(math.Inf(1))
	case x < expUnder:
		return 0
	}
	n := float32(math.Floor(float64(x*expLog2e + 0.5)))
	r := x - n*expLn2hi - n*expLn2lo
	p := float32(expC6)
	p = p*r + expC5
	p = p*r + expC4
	p = p*r + expC3
	p = p*r + expC2
	p = p*r + expC1
	e := p*r*r + r + 1
	ni := int32(n)
	if ni < -125 {
		// Build the subnormal result in two steps so that neither scale factor underflows.
		e *= math.Float32frombits(uint32(ni+127+64) << 23)
		return e * math.Float32frombits(uint32(127-64)<<23)
	}
	if ni > 127 {
		return e * 2 * math.Float32frombits(uint32(ni-1+127)<<23)
	}
	return e * math.Float32frombits(uint32(ni+127)<<23)
}

// exp32's constants (float32 values), shared by the scalar and vector code.
const (
	expOver   float32 = 88.72284   // above: +inf
	expUnder  float32 = -103.97208 // below: 0
	expFastLo float32 = -86        // [expFastLo, expFastHi]: 2^n is a normal float32
	expFastHi float32 = 88         //
	expLog2e  float32 = 1.44269504088896341
	expLn2hi  float32 = 0.693359375 // ln2 = expLn2hi + expLn2lo, expLn2hi with few significant bits
	expLn2lo  float32 = -2.12194440e-4
	expC6     float32 = 1.9875691500e-4 // e^r ≈ 1 + r + r^2 (C1 + C2 r + ... + C6 r^5)
	expC5     float32 = 1.3981999507e-3
	expC4     float32 = 8.3334519073e-3
	expC3     float32 = 4.1665795894e-2
	expC2     float32 = 1.6666665459e-1
	expC1     float32 = 5.0000001201e-1
)

// Shifted sets dst[i] = Exp32(±src[i] - shift), minus when neg, with the same bits as exp32. Where
// the CPU has the vector unit for it (exp_amd64.go) blocks of eight run there; a block holding an
// argument the vector code leaves to the scalar code, and the tail, run expShiftedGo.
func Shifted(dst, src []float32, shift float32, neg bool) {
	src = src[:len(dst)]
	if !hasExpVec {
		expShiftedGo(dst, src, shift, neg)
		return
	}
	for len(dst) > 0 {
		done := expShiftedVec(dst, src, shift, neg)
		if r := len(dst) - done; r >= tailVec && r < expVecWidth && shiftedTail(dst[done:], src[done:], shift, neg) {
			return
		}
		k := min(len(dst), done+expVecWidth)
		expShiftedGo(dst[done:k], src[done:k], shift, neg)
		dst, src = dst[k:], src[k:]
	}
}

// tailVec is the shortest tail shiftedTail takes: its buffers and call cost about what six entries of
// the scalar loop do (30 ns).
const tailVec = 6

// shiftedTail runs Shifted's vector code on the last few (under a block's) entries, padded to a block
// in a buffer (so that dst may be src), and reports whether it took them all: the scalar loop costs a
// masked softmax row's short runs (a decoder's new column, a run's last entries) more than the rest.
func shiftedTail(dst, src []float32, shift float32, neg bool) bool {
	var in, out [expVecWidth]float32
	pad := shift // a padding lane's argument is 0
	if neg {
		pad = -shift
	}
	for i := range in {
		in[i] = pad
	}
	copy(in[:], src[:len(dst)])
	if expShiftedVec(out[:], in[:], shift, neg) < expVecWidth {
		return false
	}
	copy(dst, out[:len(dst)])
	return true
}

// expShiftedGo is expShifted in Go, about twice as fast as calling exp32: arguments in [-86, 88], where
// 2^n is a normal float32, run an inline copy of exp32's operations in the same order (every product
// rounded explicitly, so that no platform fuses it into a multiply-add); the rest call exp32.
func expShiftedGo(dst, src []float32, shift float32, neg bool) {
	src = src[:len(dst)]
	for i, x := range src {
		if neg {
			x = -x
		}
		x -= shift
		if !(x >= expFastLo && x <= expFastHi) {
			dst[i] = Exp32(x)
			continue
		}
		t := float32(x*expLog2e) + 0.5
		ni := int32(t)
		if float32(ni) > t {
			ni--
		}
		n := float32(ni)
		r := float32(x-float32(n*expLn2hi)) - float32(n*expLn2lo)
		p := float32(expC6*r) + expC5
		p = float32(p*r) + expC4
		p = float32(p*r) + expC3
		p = float32(p*r) + expC2
		p = float32(p*r) + expC1
		e := float32(float32(float32(p*r)*r)+r) + 1
		dst[i] = e * math.Float32frombits(uint32(ni+127)<<23)
	}
}
