package emulator

import "github.com/anestar/anestar/mil"

// Output concats. A program output that is a concat of whole blocks (no interleave, nothing before
// the axis but dims of size 1, as in the channel concat of a [1, C, 1, S] result) and that no op
// reads is written to its surface from its parts (io.go): the concat never runs and its result needs
// no buffer. outputConcat recognises it before the concat is compiled, so that no buffer is planned
// for it; any other concat compiles as usual (and concatOp reports its errors).

// outputConcat returns the bufferless result of op when op is such a concat, with its parts recorded
// in c.concatParts; ok is false otherwise.
func (c *compiler) outputConcat(op *mil.Op, outputs, used map[string]bool) (t *tensor, ok bool) {
	if op.Kind != "concat" || len(op.Results) != 1 || op.Results[0] == nil {
		return nil, false
	}
	name := op.Results[0].Name
	if !outputs[name] || used[name] {
		return nil, false
	}
	if inter, err := c.boolArg(op, "interleave", false); err != nil || inter {
		return nil, false
	}
	t, err := c.resultNoBuf(op, 0)
	if err != nil {
		return nil, false
	}
	ax, err := c.intArg(op, "axis", 0)
	r := len(t.shape)
	if ax < 0 {
		ax += r
	}
	if err != nil || ax < 0 || ax >= r || numel(t.shape[:ax]) != 1 {
		return nil, false
	}
	vals, err := c.tupleArg(op, "values")
	if err != nil || len(vals) == 0 {
		return nil, false
	}
	total := 0
	for _, v := range vals {
		if len(v.shape) != r || v.dtype != t.dtype {
			return nil, false
		}
		for k := range v.shape {
			if k != ax && v.shape[k] != t.shape[k] {
				return nil, false
			}
		}
		total += v.shape[ax]
	}
	if total != t.shape[ax] {
		return nil, false
	}
	c.concatParts[t] = vals
	return t, true
}
