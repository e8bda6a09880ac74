package nn

// rowMax is the largest element of x (len(x) > 0), NaN when any element is NaN: Go's max over the
// elements in eight running maxima, so that the comparisons overlap instead of each waiting for the
// one before (the max of the same values in any order is the same value, -0 and +0 included).
func rowMax(x []float32) float32 {
	m := [8]float32{x[0], x[0], x[0], x[0], x[0], x[0], x[0], x[0]}
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		m[0], m[1], m[2], m[3] = max(m[0], v[0]), max(m[1], v[1]), max(m[2], v[2]), max(m[3], v[3])
		m[4], m[5], m[6], m[7] = max(m[4], v[4]), max(m[5], v[5]), max(m[6], v[6]), max(m[7], v[7])
	}
	for ; i < len(x); i++ {
		m[0] = max(m[0], x[i])
	}
	return max(max(max(m[0], m[1]), max(m[2], m[3])), max(max(m[4], m[5]), max(m[6], m[7])))
}
