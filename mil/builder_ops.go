package mil

// Typed helpers for common ops. Each returns the result (nil after an error, which the builder keeps; see
// Builder). Arguments typed any take what Args takes: a *Var (such as a shared const, the reference
// style) or a Go value that becomes a const op.

// Add adds x + y.
func (b *Builder) Add(name string, x, y any) *Var { return b.binary("add", name, x, y) }

// Sub adds x - y.
func (b *Builder) Sub(name string, x, y any) *Var { return b.binary("sub", name, x, y) }

// Mul adds x * y.
func (b *Builder) Mul(name string, x, y any) *Var { return b.binary("mul", name, x, y) }

// RealDiv adds x / y.
func (b *Builder) RealDiv(name string, x, y any) *Var { return b.binary("real_div", name, x, y) }

// Pow adds x ** y.
func (b *Builder) Pow(name string, x, y any) *Var { return b.binary("pow", name, x, y) }

// Maximum adds max(x, y).
func (b *Builder) Maximum(name string, x, y any) *Var { return b.binary("maximum", name, x, y) }

// Minimum adds min(x, y).
func (b *Builder) Minimum(name string, x, y any) *Var { return b.binary("minimum", name, x, y) }

func (b *Builder) binary(kind, name string, x, y any) *Var {
	return b.Op1(kind, name, Args{"x": x, "y": y})
}

// Sqrt adds sqrt(x).
func (b *Builder) Sqrt(name string, x *Var) *Var { return b.Op1("sqrt", name, Args{"x": x}) }

// Exp adds exp(x).
func (b *Builder) Exp(name string, x *Var) *Var { return b.Op1("exp", name, Args{"x": x}) }

// Sigmoid adds sigmoid(x).
func (b *Builder) Sigmoid(name string, x *Var) *Var { return b.Op1("sigmoid", name, Args{"x": x}) }

// Silu adds x * sigmoid(x).
func (b *Builder) Silu(name string, x *Var) *Var { return b.Op1("silu", name, Args{"x": x}) }

// Relu adds max(x, 0).
func (b *Builder) Relu(name string, x *Var) *Var { return b.Op1("relu", name, Args{"x": x}) }

// Tanh adds tanh(x).
func (b *Builder) Tanh(name string, x *Var) *Var { return b.Op1("tanh", name, Args{"x": x}) }

// Softmax adds softmax(x) along axis.
func (b *Builder) Softmax(name string, x *Var, axis any) *Var {
	return b.Op1("softmax", name, Args{"x": x, "axis": axis})
}

// ReduceSum adds the sum of x over axes.
func (b *Builder) ReduceSum(name string, x *Var, axes, keepDims any) *Var {
	return b.Op1("reduce_sum", name, Args{"x": x, "axes": axes, "keep_dims": keepDims})
}

// ReduceMean adds the mean of x over axes.
func (b *Builder) ReduceMean(name string, x *Var, axes, keepDims any) *Var {
	return b.Op1("reduce_mean", name, Args{"x": x, "axes": axes, "keep_dims": keepDims})
}

// Matmul adds x @ y with optional transpositions of the last two dims.
func (b *Builder) Matmul(name string, x, y *Var, transposeX, transposeY any) *Var {
	return b.Op1("matmul", name, Args{"x": x, "y": y, "transpose_x": transposeX, "transpose_y": transposeY})
}

// Conv adds conv(x, weight) with the further arguments in more (strides, pad_type, pad, dilations,
// groups, bias); more may be nil.
func (b *Builder) Conv(name string, x, weight *Var, more Args) *Var {
	args := Args{"x": x, "weight": weight}
	for k, v := range more {
		args[k] = v
	}
	return b.Op1("conv", name, args)
}

// Reshape adds x reshaped to shape.
func (b *Builder) Reshape(name string, x *Var, shape any) *Var {
	return b.Op1("reshape", name, Args{"x": x, "shape": shape})
}

// Transpose adds x with its dims permuted by perm.
func (b *Builder) Transpose(name string, x *Var, perm any) *Var {
	return b.Op1("transpose", name, Args{"x": x, "perm": perm})
}

// SliceBySize adds the block of x at begin with extent size.
func (b *Builder) SliceBySize(name string, x *Var, begin, size any) *Var {
	return b.Op1("slice_by_size", name, Args{"x": x, "begin": begin, "size": size})
}

// Concat adds values joined along axis.
func (b *Builder) Concat(name string, axis, interleave any, values ...*Var) *Var {
	return b.Op1("concat", name, Args{"values": values, "axis": axis, "interleave": interleave})
}

// Split adds x cut along axis into parts of the given sizes.
func (b *Builder) Split(name string, x *Var, axis any, sizes []int) []*Var {
	if b.err != nil {
		return nil
	}
	rs, err := b.Op("split", name, Args{"x": x, "axis": axis, "split_sizes": sizes})
	b.keep(err)
	return rs
}

// Cast adds x converted to dtype (a dtype name such as "fp16", or a string const).
func (b *Builder) Cast(name string, x *Var, dtype any) *Var {
	return b.Op1("cast", name, Args{"x": x, "dtype": dtype})
}
