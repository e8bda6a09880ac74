package emulator

import "math"

// exp32 is e^x in float32 to within 2 ulp, without a trip through float64: Cody-Waite range reduction
// x = n*ln2 + r with |r| <= ln2/2 and a degree-6 polynomial for e^r, scaled by 2^n through the exponent.
func exp32(x float32) float32 {
	switch {
	case x != x:
		return x
	case x > 88.72284:
		return float32(math.Inf(1))
	case x < -103.97208:
		return 0
	}
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	n := float32(math.Floor(float64(x*log2e + 0.5)))
	r := x - n*ln2hi - n*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
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

// sigmoid32 is 1/(1+e^-x).
func sigmoid32(x float32) float32 { return 1 / (1 + exp32(-x)) }

// expShifted sets dst[i] = exp32(±src[i] - shift), minus when neg, with the same bits as exp32 but
// about twice as fast: arguments in [-86, 88], where 2^n is a normal float32, run an inline copy of
// exp32's operations in the same order (every product rounded explicitly, so that no platform fuses it
// into a multiply-add); the rest call exp32.
func expShifted(dst, src []float32, shift float32, neg bool) {
	src = src[:len(dst)]
	for i, x := range src {
		if neg {
			x = -x
		}
		x -= shift
		if !(x >= -86 && x <= 88) {
			dst[i] = exp32(x)
			continue
		}
		t := float32(x*1.44269504088896341) + 0.5
		ni := int32(t)
		if float32(ni) > t {
			ni--
		}
		n := float32(ni)
		r := float32(x-float32(n*0.693359375)) - float32(n*-2.12194440e-4)
		p := float32(float32(1.9875691500e-4)*r) + 1.3981999507e-3
		p = float32(p*r) + 8.3334519073e-3
		p = float32(p*r) + 4.1665795894e-2
		p = float32(p*r) + 1.6666665459e-1
		p = float32(p*r) + 5.0000001201e-1
		e := float32(float32(float32(p*r)*r)+r) + 1
		dst[i] = e * math.Float32frombits(uint32(ni+127)<<23)
	}
}
