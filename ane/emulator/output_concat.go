package emulator

import (
	"slices"

	"github.com/anestar/anestar/mil"
)

// Output concats. A program output that is a concat of whole blocks (no interleave, nothing before
// the axis but dims of size 1, as in the channel concat of a [1, C, 1, S] result) and that no op
// reads is written to its surface from its parts (io.go): the concat never runs and its result needs
// no buffer. So is an output that is a cast to fp32 of such a concat read by the cast alone, as the
// kernels with fp32 I/O end (mil_dynamic.h's convention): a cast from fp16 or fp32 to fp32 changes no
// value, so the parts' values are the output's. outputConcat recognises both before the ops are
// compiled, so that no buffer is planned for them; any other concat compiles as usual (and concatOp
// reports its errors).

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
	t, err := c.resultNoBuf(op, 0)
	if err != nil {
		return nil, false
	}
	return c.fromParts(t, op)
}

// outputCasts finds the casts to fp32 of fn whose result is an output that no op reads and whose x is
// a concat's result that only the cast reads: the concat's op index to the cast's.
func outputCasts(fn *mil.Func, outputs, used map[string]bool) map[int]int {
	reads := readCounts(fn)
	producer := map[string]int{}
	for i, op := range fn.Ops {
		if op != nil && op.Kind == "concat" && len(op.Results) == 1 && op.Results[0] != nil {
			producer[op.Results[0].Name] = i
		}
	}
	found := map[int]int{}
	for j, op := range fn.Ops {
		if op == nil || op.Kind != "cast" || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		r := op.Results[0]
		if !outputs[r.Name] || used[r.Name] || r.Type.Kind != mil.TensorKind || r.Type.DType != mil.FP32 {
			continue
		}
		x := op.Arg("x")
		if x == nil || len(x.Operands) != 1 || x.Operands[0].Ref == nil {
			continue
		}
		if i, ok := producer[x.Operands[0].Ref.Name]; ok && reads[x.Operands[0].Ref.Name] == 1 {
			found[i] = j
		}
	}
	return found
}

// castConcat makes the bufferless result of cast, the fp32 output written from the parts of op, its
// concat (outputCasts); ok is false when op is not a concat of whole blocks of a float type and shape
// that the cast keeps.
func (c *compiler) castConcat(op, cast *mil.Op) (t *tensor, ok bool) {
	r := op.Results[0]
	if r == nil || r.Type.Kind != mil.TensorKind || (r.Type.DType != mil.FP16 && r.Type.DType != mil.FP32) {
		return nil, false
	}
	t, err := c.resultNoBuf(cast, 0)
	if err != nil || !slices.Equal(t.shape, r.Type.Shape) {
		return nil, false
	}
	return c.fromParts(t, op)
}

// fromParts makes t, an output, written from the parts of concat when they are whole blocks.
func (c *compiler) fromParts(t *tensor, concat *mil.Op) (*tensor, bool) {
	parts, ok := c.blockParts(concat)
	if !ok {
		return nil, false
	}
	c.concatParts[t] = parts
	return t, true
}

// blockParts returns the values of op, a concat, when it lays whole blocks of them end to end into its
// result; ok is false otherwise.
func (c *compiler) blockParts(op *mil.Op) (parts []*tensor, ok bool) {
	t, err := c.resultNoBuf(op, 0)
	if err != nil {
		return nil, false
	}
	vals, err := c.tupleArg(op, "values")
	if err != nil {
		return nil, false
	}
	shapes := make([][]int, len(vals))
	for i, v := range vals {
		if v.dtype != t.dtype {
			return nil, false
		}
		shapes[i] = v.shape
	}
	return vals, c.wholeBlocks(op, t.shape, shapes)
}

// wholeBlocks reports whether op, a concat of values of the given shapes into a result of shape, lays
// whole blocks of them end to end: no interleave, nothing before the axis but dims of size 1, each
// value's dims the result's but on the axis, where they add up to the result's.
func (c *compiler) wholeBlocks(op *mil.Op, shape []int, values [][]int) bool {
	if inter, err := c.boolArg(op, "interleave", false); err != nil || inter {
		return false
	}
	ax, err := c.intArg(op, "axis", 0)
	r := len(shape)
	if ax < 0 {
		ax += r
	}
	if err != nil || ax < 0 || ax >= r || numel(shape[:ax]) != 1 || len(values) == 0 {
		return false
	}
	total := 0
	for _, s := range values {
		if len(s) != r {
			return false
		}
		for k := range s {
			if k != ax && s[k] != shape[k] {
				return false
			}
		}
		total += s[ax]
	}
	return total == shape[ax]
}
