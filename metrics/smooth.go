package metrics

// MovingAverage returns ys smoothed by a centred moving average: each output is the
// mean of the inputs within span/2 positions on either side, the window shrinking
// where it runs past either end. A span below 2 returns a copy of ys.
// Non-finite inputs propagate into the windows that hold them; drop them first.
func MovingAverage(ys []float64, span int) []float64 {
	out := make([]float64, len(ys))
	h := span / 2
	if h < 1 {
		copy(out, ys)
		return out
	}
	// Sliding sum over the window [lo, hi).
	sum, lo, hi := 0.0, 0, 0
	for i := range ys {
		for hi < len(ys) && hi <= i+h {
			sum += ys[hi]
			hi++
		}
		for lo < i-h {
			sum -= ys[lo]
			lo++
		}
		if i%(2*h+1) == 0 {
			// Re-add from scratch now and then so rounding from the running
			// subtraction cannot build up over a long series.
			sum = 0
			for _, y := range ys[lo:hi] {
				sum += y
			}
		}
		out[i] = sum / float64(hi-lo)
	}
	return out
}

// DefaultSpan is the moving-average span used when none is asked for: an odd number
// near n/25, so that a series shows about 25 independent bumps, or 1 (no smoothing)
// for fewer than 50 points.
func DefaultSpan(n int) int {
	s := n / 25
	if s < 2 {
		return 1
	}
	return s | 1
}
