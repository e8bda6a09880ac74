package builtins

import (
	"fmt"
	"math"
	"slices"

	"github.com/anestar/anestar/nn"
	"github.com/anestar/anestar/npy"
	"github.com/anestar/anestar/numcsv"
	"go.starlark.net/starlark"
)

func (s *session) tensorModule() *moduleDef {
	return &moduleDef{
		name: "tensor",
		doc: "Makes float32 tensors. Shapes are given as ints (`zeros(768, 512)`) or as one list or tuple. " +
			"The random functions draw from the run's generator, seeded by --seed; its state can be saved " +
			"in a checkpoint and restored, so a resumed run draws the same numbers as an uninterrupted one.",
		fns: []fnDef{
			{sig: "zeros(*shape)", doc: "A tensor of zeros.", fn: s.tensorFull(0)},
			{sig: "ones(*shape)", doc: "A tensor of ones.", fn: s.tensorFull(1)},
			{sig: "full(shape, value)", doc: "A tensor with every element value.", fn: tensorFullValue},
			{sig: "zeros_like(t)", doc: "A tensor of zeros with t's shape.", fn: tensorZerosLike},
			{sig: "uniform(shape, low = 0.0, high = 1.0)", doc: "Uniform random values in [low, high).", fn: s.tensorUniform},
			{sig: "dropout_mask(out, p)", doc: "Fills out, in place, with a dropout mask from the run's generator: each element 0 with probability p, " +
				"else 1/(1 - p) (inverted dropout: multiply activations and their gradients by it). p in [0, 1). Returns out.", fn: s.tensorDropoutMask},
			{sig: "normal(shape, mean = 0.0, std = 1.0)", doc: "Normally distributed random values.", fn: s.tensorNormal},
			{sig: "from_list(values, shape = None)", doc: "A tensor of the numbers in values (a flat list, or nested " +
				"lists of equal lengths); shape defaults to the nesting, else reshapes the flat values.", fn: tensorFromList},
			{sig: "cat(tensors)", doc: "A new tensor joining tensors along the first axis; the other dims must agree.", fn: tensorCat},
			{sig: "load_npy(path)", doc: "Reads a .npy file (float32, float16 or float64, C order) as a tensor.", fn: tensorLoadNpy},
			{sig: "save_npy(path, t)", doc: "Writes t to a .npy file as float32.", fn: tensorSaveNpy},
			{sig: "load_csv(path, skip = 0)", doc: "Reads a file of comma-separated numbers, plain or gzip-compressed (.csv.gz), " +
				"as a [rows, columns] tensor; every row must have the same number of fields; skip leading lines " +
				"(a header) are ignored, as are empty lines.", fn: tensorLoadCSV},
			{sig: "take(t, indices, out = None)", doc: "The rows of t (along the first axis) at indices, a list of ints, " +
				"in that order: a new tensor, or written into out (of shape [len(indices), ...]): gathering a mini-batch.", fn: tensorTake},
			{sig: "argmax(t)", doc: "The index of the first largest element of each row of t (the first axis, the rest " +
				"flattened), a list of ints; of a 1-D t, an int.", fn: tensorArgmax},
			{sig: "sample(logits, temperature = 1.0, top_p = 1.0)", doc: "An index drawn from a 1-D tensor of logits as llama2.c's run.c " +
				"picks the next token, an int: at temperature 0 the largest (no draw); else from softmax(logits / temperature), " +
				"kept to the nucleus when top_p < 1 (the most probable indices until their probabilities add up to top_p), with one " +
				"uniform draw from the run's generator.", fn: s.tensorSample},
			{sig: "permutation(n)", doc: "A random permutation of range(n), a list of ints, from the run's generator: shuffling.", fn: s.tensorPermutation},
			{sig: "equal(a, b)", doc: "True when a and b have the same shape and equal values (NaN equals nothing): the test of an exact resume.", fn: tensorEqual},
			{sig: "allclose(a, b, rtol = 1e-5, atol = 1e-8)", doc: "True when a and b have the same shape and |a-b| <= atol + rtol*|b| everywhere.", fn: tensorAllclose},
			{sig: "seed(n)", doc: "Reseeds the run's random generator.", fn: s.tensorSeed},
			{sig: "rng_state()", doc: "The random generator's state as a string, for a checkpoint.", fn: s.tensorRNGState},
			{sig: "set_rng_state(state)", doc: "Restores a state returned by rng_state().", fn: s.tensorSetRNGState},
		},
	}
}

func (s *session) tensorFull(v float32) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(kwargs) > 0 {
			return nil, nameErrf(b.Name(), "unexpected keyword arguments")
		}
		shape, err := shapeFromArgs(b.Name(), args)
		if err != nil {
			return nil, err
		}
		return filled(b.Name(), shape, v)
	}
}

func filled(fn string, shape []int, v float32) (*Tensor, error) {
	t, err := NewTensor(shape...)
	if err != nil {
		return nil, nameErr(fn, err)
	}
	if v != 0 {
		for i := range t.data {
			t.data[i] = v
		}
	}
	return t, nil
}

func tensorFullValue(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var shape shapeArg
	var v number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shape, "value", &v); err != nil {
		return nil, err
	}
	return filled(b.Name(), shape, float32(v))
}

func tensorZerosLike(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &t); err != nil {
		return nil, err
	}
	return filled(b.Name(), t.shape, 0)
}

func (s *session) tensorUniform(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var shape shapeArg
	lo, hi := number(0), number(1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shape, "low?", &lo, "high?", &hi); err != nil {
		return nil, err
	}
	if !finite(float64(lo)) || !finite(float64(hi)) || hi < lo {
		return nil, nameErrf(b.Name(), "low = %g, high = %g: want finite bounds with low <= high", float64(lo), float64(hi))
	}
	t, err := filled(b.Name(), shape, 0)
	if err != nil {
		return nil, err
	}
	s.rng.uniform(t.data, float64(lo), float64(hi))
	return t, nil
}

func (s *session) tensorDropoutMask(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var out *Tensor
	var p number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "out", &out, "p", &p); err != nil {
		return nil, err
	}
	if !(p >= 0 && p < 1) {
		return nil, fmt.Errorf("%s: p = %g, want a probability in [0, 1)", b.Name(), float64(p))
	}
	if err := out.writable(b.Name()); err != nil {
		return nil, err
	}
	s.rng.dropoutMask(out.data, float64(p))
	return out, nil
}

func (s *session) tensorNormal(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var shape shapeArg
	mean, std := number(0), number(1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "shape", &shape, "mean?", &mean, "std?", &std); err != nil {
		return nil, err
	}
	if !finite(float64(mean)) || !finite(float64(std)) || std < 0 {
		return nil, nameErrf(b.Name(), "mean = %g, std = %g: want a finite mean and a finite std >= 0", float64(mean), float64(std))
	}
	t, err := filled(b.Name(), shape, 0)
	if err != nil {
		return nil, err
	}
	s.rng.normal(t.data, float64(mean), float64(std))
	return t, nil
}

func tensorFromList(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var values starlark.Value
	var shape shapeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "values", &values, "shape?", &shape); err != nil {
		return nil, err
	}
	var data []float32
	var nest []int
	if err := flatten(values, 0, &nest, &data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if shape == nil {
		shape = nest
	}
	sh, err := inferShape(shape, len(data))
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	t, err := TensorOf(data, sh...)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return t, nil
}

// flatten appends the numbers of nested lists to data, recording (and checking) the nesting shape.
func flatten(v starlark.Value, depth int, shape *[]int, data *[]float32) error {
	if f, ok := starlark.AsFloat(v); ok {
		if depth != len(*shape) {
			return fmt.Errorf("ragged nesting: a number at depth %d, lists at depth %d", depth, len(*shape))
		}
		*data = append(*data, float32(f))
		return nil
	}
	seq, ok := v.(starlark.Indexable)
	if !ok || (v.Type() != "list" && v.Type() != "tuple") {
		return fmt.Errorf("got %s, want a number or a list of numbers", v.Type())
	}
	n := seq.Len()
	if n == 0 {
		return fmt.Errorf("empty list: tensors cannot be empty")
	}
	if depth == len(*shape) && (depth == 0 || len(*data) == 0) {
		*shape = append(*shape, n)
	} else if depth >= len(*shape) || (*shape)[depth] != n {
		return fmt.Errorf("ragged nesting: a list of %d at depth %d", n, depth)
	}
	for i := 0; i < n; i++ {
		if err := flatten(seq.Index(i), depth+1, shape, data); err != nil {
			return err
		}
	}
	return nil
}

func tensorCat(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var list starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "tensors", &list); err != nil {
		return nil, err
	}
	ts, err := tensorList(b.Name(), "tensors", list)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, nameErrf(b.Name(), "no tensors")
	}
	rows := 0
	for i, t := range ts {
		if len(t.shape) != len(ts[0].shape) || !slices.Equal(t.shape[1:], ts[0].shape[1:]) {
			return nil, nameErrf(b.Name(), "tensors[%d] is %s, tensors[0] is %s", i, t, ts[0])
		}
		if err := t.readable(b.Name()); err != nil {
			return nil, err
		}
		rows += t.shape[0]
	}
	out, err := NewTensor(append([]int{rows}, ts[0].shape[1:]...)...)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	off := 0
	for _, t := range ts {
		off += copy(out.data[off:], t.data)
	}
	return out, nil
}

func tensorLoadNpy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	a, err := npy.ReadFile(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	shape := a.Shape
	if len(shape) == 0 {
		shape = []int{1}
	}
	t, err := TensorOf(a.Data, shape...)
	if err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", path, err)
	}
	return t, nil
}

func tensorSaveNpy(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var t *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "t", &t); err != nil {
		return nil, err
	}
	if err := refuseScriptOf(th, path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := npy.WriteFile(path, &npy.Array{Shape: t.shape, DType: npy.F32, Data: t.data}); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func unpackPair(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, extra ...any) (*Tensor, *Tensor, error) {
	var x, y *Tensor
	pairs := append([]any{"a", &x, "b", &y}, extra...)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, nil, err
	}
	if err := readableAll(b.Name(), x, y); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

func tensorEqual(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	x, y, err := unpackPair(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(x.shape, y.shape) {
		return starlark.False, nil
	}
	for i, v := range x.data {
		if v != y.data[i] {
			return starlark.False, nil
		}
	}
	return starlark.True, nil
}

func tensorAllclose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	rtol, atol := number(1e-5), number(1e-8)
	x, y, err := unpackPair(b, args, kwargs, "rtol?", &rtol, "atol?", &atol)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(x.shape, y.shape) {
		return starlark.False, nil
	}
	for i, v := range x.data {
		a, c := float64(v), float64(y.data[i])
		if !(math.Abs(a-c) <= float64(atol)+float64(rtol)*math.Abs(c)) {
			return starlark.False, nil
		}
	}
	return starlark.True, nil
}

func (s *session) tensorSeed(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n uint64
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "n", &n); err != nil {
		return nil, err
	}
	s.rng = newRNG(n)
	return starlark.None, nil
}

func (s *session) tensorRNGState(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return starlark.String(s.rng.state()), nil
}

func (s *session) tensorSetRNGState(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var st string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "state", &st); err != nil {
		return nil, err
	}
	if err := s.rng.setState(st); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func tensorLoadCSV(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	skip := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "skip?", &skip); err != nil {
		return nil, err
	}
	tab, err := numcsv.ReadFile(path, skip)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	t, err := TensorOf(tab.Data, tab.Rows, tab.Cols)
	if err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", path, err)
	}
	return t, nil
}

// intList unpacks a list or tuple of ints.
func intList(fn, what string, v starlark.Value) ([]int, error) {
	seq, ok := v.(starlark.Indexable)
	if !ok || (v.Type() != "list" && v.Type() != "tuple") {
		return nil, nameErrf(fn, "%s: got %s, want a list of ints", what, v.Type())
	}
	out := make([]int, seq.Len())
	for i := range out {
		if err := starlark.AsInt(seq.Index(i), &out[i]); err != nil {
			return nil, nameErrf(fn, "%s[%d]: %w", what, i, err)
		}
	}
	return out, nil
}

func tensorTake(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t *Tensor
	var indices, outV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &t, "indices", &indices, "out?", &outV); err != nil {
		return nil, err
	}
	idx, err := intList(b.Name(), "indices", indices)
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		return nil, nameErrf(b.Name(), "no indices")
	}
	n := t.shape[0]
	for i, j := range idx {
		if j < 0 || j >= n {
			return nil, nameErrf(b.Name(), "indices[%d] = %d is out of range [0, %d) of %s", i, j, n, t)
		}
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	shape := append([]int{len(idx)}, t.shape[1:]...)
	var out *Tensor
	switch o := outV.(type) {
	case nil, starlark.NoneType:
		if out, err = NewTensor(shape...); err != nil {
			return nil, nameErr(b.Name(), err)
		}
	case *Tensor:
		if !slices.Equal(o.shape, shape) {
			return nil, nameErrf(b.Name(), "out is %s, want %s", o, shapeString(shape))
		}
		if o.st == t.st {
			return nil, nameErrf(b.Name(), "out shares storage with t")
		}
		if err := o.writable(b.Name()); err != nil {
			return nil, err
		}
		out = o
	default:
		return nil, nameErrf(b.Name(), "for parameter out: got %s, want tensor or None", outV.Type())
	}
	rs := t.rowSize()
	for i, j := range idx {
		copy(out.data[i*rs:(i+1)*rs], t.data[j*rs:(j+1)*rs])
	}
	return out, nil
}

func tensorArgmax(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &t); err != nil {
		return nil, err
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	if len(t.shape) == 1 {
		return starlark.MakeInt(argmax(t.data)), nil
	}
	rs := t.rowSize()
	out := make([]starlark.Value, t.shape[0])
	for i := range out {
		out[i] = starlark.MakeInt(argmax(t.data[i*rs : (i+1)*rs]))
	}
	return starlark.NewList(out), nil
}

// argmax returns the index of the first largest element of d; NaNs are never the largest unless
// every element is NaN (then 0).
func argmax(d []float32) int {
	best := 0
	for i, v := range d {
		if v > d[best] || (d[best] != d[best] && v == v) {
			best = i
		}
	}
	return best
}

func (s *session) tensorPermutation(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var n int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "n", &n); err != nil {
		return nil, err
	}
	if n < 0 || n > maxElements {
		return nil, nameErrf(b.Name(), "n is %d, want 0 <= n <= %d", n, maxElements)
	}
	p := s.rng.r.Perm(n)
	out := make([]starlark.Value, n)
	for i, v := range p {
		out[i] = starlark.MakeInt(v)
	}
	return starlark.NewList(out), nil
}

func (s *session) tensorSample(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var t *Tensor
	temp, topP := number(1), number(1)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "logits", &t, "temperature?", &temp, "top_p?", &topP); err != nil {
		return nil, err
	}
	if len(t.shape) != 1 {
		return nil, fmt.Errorf("%s: logits of shape %v, want a 1-D tensor (a row: t[i])", b.Name(), t.shape)
	}
	u := 0.0
	if temp > 0 {
		u = s.rng.r.Float64()
	}
	i, err := nn.SampleLogits(t.data, nil, float64(temp), float64(topP), u)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	return starlark.MakeInt(i), nil
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
