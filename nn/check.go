package nn

import (
	"fmt"
	"strings"
)

// lengthCheck collects the first length problem among a call's slices.
type lengthCheck struct {
	op  string // function name for messages, e.g. "nn.RMSNorm"
	err error
}

// atLeast records an error when s is shorter than n.
func (c *lengthCheck) atLeast(name string, s []float32, n int) {
	if c.err == nil && len(s) < n {
		c.err = fmt.Errorf("%s: %s has %d elements, need %d", c.op, name, len(s), n)
	}
}

// dims records an error unless every named dimension is positive and their
// product fits an int.
func (c *lengthCheck) dims(names string, d ...int) {
	if c.err != nil {
		return
	}
	p := 1
	for _, v := range d {
		if v < 1 {
			c.err = fmt.Errorf("%s: dimensions %s = %v, want all >= 1", c.op, names, d)
			return
		}
		if p > maxInt/v {
			c.err = fmt.Errorf("%s: dimensions %s = %v overflow", c.op, names, d)
			return
		}
		p *= v
	}
}

const maxInt = int(^uint(0) >> 1)

// normArgs checks the arguments of a column norm over [C, S]: dims, the gains (C values each) and the
// full tensors (C*S each), named in order by gains and full, comma-separated ("w", "out, x").
func normArgs(op string, C, S int, gains string, g [][]float32, full string, f [][]float32) error {
	c := lengthCheck{op: op}
	c.dims("C, S", C, S)
	for i, name := range strings.Split(full, ", ") {
		c.atLeast(name, f[i], C*S)
	}
	for i, name := range strings.Split(gains, ", ") {
		c.atLeast(name, g[i], C)
	}
	return c.err
}
