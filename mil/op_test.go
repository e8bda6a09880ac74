package mil

import (
	"slices"
	"strings"
	"testing"
)

// Shorthands for operands of Infer.
func tf16(shape ...int) []ArgInfo { return []ArgInfo{{Type: Tensor(FP16, shape...)}} }
func tf32(shape ...int) []ArgInfo { return []ArgInfo{{Type: Tensor(FP32, shape...)}} }
func sf16() []ArgInfo             { return []ArgInfo{{Type: Scalar(FP16)}} }
func cints(v ...int) []ArgInfo {
	val := IntsValue(v...)
	return []ArgInfo{{Type: val.Type, Value: val}}
}
func cint(v int) []ArgInfo {
	val := ScalarValue(Int32, float64(v))
	return []ArgInfo{{Type: val.Type, Value: val}}
}
func cbool(v bool) []ArgInfo { val := BoolValue(v); return []ArgInfo{{Type: val.Type, Value: val}} }
func cbools(v ...bool) []ArgInfo {
	val := BoolsValue(v...)
	return []ArgInfo{{Type: val.Type, Value: val}}
}
func cstr(s string) []ArgInfo { val := StringValue(s); return []ArgInfo{{Type: val.Type, Value: val}} }
func cf16(shape ...int) []ArgInfo {
	n := Tensor(FP16, shape...).NumElements()
	val := TensorValue(FP16, shape, make([]float64, n))
	return []ArgInfo{{Type: val.Type, Value: val}}
}
func tuple(parts ...[]ArgInfo) []ArgInfo {
	var out []ArgInfo
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

type A = map[string][]ArgInfo

func TestInfer(t *testing.T) {
	tests := []struct {
		op   string
		args A
		want []Type // nil when an error is expected
		err  string // substring of the error
	}{
		// Elementwise binary with broadcasting.
		{"add", A{"x": tf16(1, 768, 1, 512), "y": tf16(1, 768, 1, 1)}, []Type{Tensor(FP16, 1, 768, 1, 512)}, ""},
		{"mul", A{"x": tf16(2, 1, 3), "y": tf16(4, 1)}, []Type{Tensor(FP16, 2, 4, 3)}, ""},
		{"sub", A{"x": sf16(), "y": tf16(3)}, []Type{Tensor(FP16, 3)}, ""},
		{"real_div", A{"x": sf16(), "y": sf16()}, []Type{Scalar(FP16)}, ""},
		{"pow", A{"x": tf16(1, 1, 1, 512), "y": sf16()}, []Type{Tensor(FP16, 1, 1, 1, 512)}, ""},
		{"maximum", A{"x": tf16(3), "y": tf16(4)}, nil, "do not broadcast"},
		{"minimum", A{"x": tf16(3), "y": tf32(3)}, nil, `argument "y" has dtype fp32, x has fp16`},
		{"add", A{"x": tf16(3)}, nil, `missing argument "y"`},
		{"add", A{"x": tf16(3), "y": tf16(3), "z": tf16(3)}, nil, `unknown argument "z"`},
		{"add", A{"x": tf16(3), "y": tf16(3), "zz": tf16(3), "b": tf16(3)}, nil, `unknown argument "b"`}, // the first by name
		{"concat", A{"values": tuple(tf16(3), tf16(3, 0)), "axis": cint(0), "interleave": cbool(false)}, nil, `argument "values", member 1,: type tensor<fp16, [3, 0]> has a dimension 0`},
		{"add", A{"x": tf16(3, 0), "y": tf16(3)}, nil, `argument "x": type tensor<fp16, [3, 0]> has a dimension 0`},
		{"add", A{"x": []ArgInfo{{Type: Tensor(Bool, 3)}}, "y": tf16(3)}, nil, `argument "x" has dtype bool`},
		{"add", A{"x": tf16(3, 0), "y": tf16(3)}, nil, "dimension 0"},
		// Unary.
		{"sigmoid", A{"x": tf16(1, 2048, 1, 512)}, []Type{Tensor(FP16, 1, 2048, 1, 512)}, ""},
		{"exp", A{"x": []ArgInfo{{Type: Tensor(Int32, 3)}}}, nil, "want fp16 or fp32"},
		{"rsqrt", A{"x": tf16(4), "epsilon": []ArgInfo{{Type: Scalar(FP16), Value: ScalarValue(FP16, 1e-5)}}}, []Type{Tensor(FP16, 4)}, ""},
		{"rsqrt", A{"x": tf16(4), "epsilon": []ArgInfo{{Type: Scalar(FP32), Value: ScalarValue(FP32, 1e-5)}}}, nil, `argument "epsilon" has dtype fp32, x has fp16`},
		{"log", A{"x": tf16(4), "epsilon": sf16()}, nil, `argument "epsilon" must be a constant`},
		{"gelu", A{"x": tf16(4), "mode": cstr("TANH_APPROXIMATION")}, []Type{Tensor(FP16, 4)}, ""},
		{"gelu", A{"x": tf16(4), "mode": cstr("FAST")}, nil, `"FAST" is not one of`},
		// Softmax and reductions.
		{"softmax", A{"x": tf16(1, 12, 512, 512), "axis": cint(-1)}, []Type{Tensor(FP16, 1, 12, 512, 512)}, ""},
		{"softmax", A{"x": tf16(1, 12, 512, 512), "axis": cint(4)}, nil, "axis 4 is out of range for rank 4"},
		{"softmax", A{"x": tf16(3), "axis": cints(0)}, nil, `argument "axis" has type tensor<int32, [1]>, want a scalar`},
		{"reduce_sum", A{"x": tf16(1, 768, 1, 512), "axes": cints(1), "keep_dims": cbool(true)}, []Type{Tensor(FP16, 1, 1, 1, 512)}, ""},
		{"reduce_sum", A{"x": tf16(1, 768, 1, 512), "axes": cints(1)}, []Type{Tensor(FP16, 1, 1, 512)}, ""},
		{"reduce_mean", A{"x": tf16(1, 12, 512, 512), "axes": cints(-1), "keep_dims": cbool(true)}, []Type{Tensor(FP16, 1, 12, 512, 1)}, ""},
		{"reduce_max", A{"x": tf16(2, 3)}, []Type{Scalar(FP16)}, ""},
		{"reduce_max", A{"x": tf16(2, 3), "keep_dims": cbool(true)}, []Type{Tensor(FP16, 1, 1)}, ""},
		{"reduce_sum", A{"x": tf16(2, 3), "axes": cints(1, -1)}, nil, "appears twice"},
		{"reduce_sum", A{"x": tf16(2, 3), "axes": tf16(1)}, nil, `argument "axes" has dtype fp16`},
		{"layer_norm", A{"x": tf16(2, 5, 8), "axes": cints(-1), "gamma": cf16(8), "beta": cf16(8), "epsilon": []ArgInfo{{Type: Scalar(FP16), Value: ScalarValue(FP16, 1e-5)}}}, []Type{Tensor(FP16, 2, 5, 8)}, ""},
		{"layer_norm", A{"x": tf16(2, 5, 8), "axes": cints(-1), "gamma": cf16(5)}, nil, `argument "gamma" has shape [5], want x.shape[axes] = [8]`},
		// Conv.
		{"conv", A{"x": tf16(1, 768, 1, 512), "weight": tf16(512, 768, 1, 1)}, []Type{Tensor(FP16, 1, 512, 1, 512)}, ""},
		{"conv", A{"x": tf16(1, 768, 1, 512), "weight": tf16(512, 512, 1, 1)}, nil, "weight has 512 input channels, x has 768"},
		{"conv", A{"x": tf16(1, 3, 7, 7), "weight": tf16(8, 3, 3, 3), "strides": cints(2, 2)}, []Type{Tensor(FP16, 1, 8, 3, 3)}, ""},
		{"conv", A{"x": tf16(1, 3, 7, 7), "weight": tf16(8, 3, 3, 3), "strides": cints(2, 2), "pad_type": cstr("same")}, []Type{Tensor(FP16, 1, 8, 4, 4)}, ""},
		{"conv", A{"x": tf16(1, 3, 7, 7), "weight": tf16(8, 3, 3, 3), "pad_type": cstr("custom"), "pad": cints(1, 1, 0, 0)}, []Type{Tensor(FP16, 1, 8, 7, 5)}, ""},
		{"conv", A{"x": tf16(1, 3, 7, 7), "weight": tf16(8, 3, 3, 3), "dilations": cints(2, 3)}, []Type{Tensor(FP16, 1, 8, 3, 1)}, ""},
		{"conv", A{"x": tf16(1, 6, 5, 5), "weight": tf16(9, 2, 1, 1), "groups": cint(3), "bias": cf16(9)}, []Type{Tensor(FP16, 1, 9, 5, 5)}, ""},
		{"conv", A{"x": tf16(1, 6, 5, 5), "weight": tf16(9, 3, 1, 1), "groups": cint(3)}, nil, "weight has 3 input channels per group in 3 groups, x has 6"},
		{"conv", A{"x": tf16(1, 3, 5, 5), "weight": tf16(8, 3, 1, 1), "bias": cf16(4)}, nil, "bias has 4 elements, weight has 8 output channels"},
		{"conv", A{"x": tf16(1, 3, 5, 5), "weight": tf16(8, 3, 1, 1), "pad_type": cstr("full")}, nil, `"full" is not one of`},
		{"conv", A{"x": tf16(1, 3, 2, 2), "weight": tf16(8, 3, 3, 3)}, nil, "smaller than the dilated kernel"},
		{"conv", A{"x": tf16(1, 3, 5, 5), "weight": tf16(8, 3, 1)}, nil, "weight has rank 3, x has rank 4"},
		{"conv", A{"x": tf16(1, 3, 5, 5), "weight": tf16(8, 3, 1, 1), "strides": cints(1)}, nil, `argument "strides" has 1 values, want 2`},
		// Matmul.
		{"matmul", A{"x": tf16(1, 12, 512, 64), "y": tf16(1, 12, 512, 64), "transpose_y": cbool(true)}, []Type{Tensor(FP16, 1, 12, 512, 512)}, ""},
		{"matmul", A{"x": tf16(1, 12, 512, 512), "y": tf16(1, 12, 512, 64), "transpose_x": cbool(true)}, []Type{Tensor(FP16, 1, 12, 512, 64)}, ""},
		{"matmul", A{"x": tf16(2, 1, 3, 4), "y": tf16(5, 4, 6)}, []Type{Tensor(FP16, 2, 5, 3, 6)}, ""},
		{"matmul", A{"x": tf16(4), "y": tf16(4, 6)}, []Type{Tensor(FP16, 6)}, ""},
		{"matmul", A{"x": tf16(2, 3, 4), "y": tf16(4)}, []Type{Tensor(FP16, 2, 3)}, ""},
		{"matmul", A{"x": tf16(4), "y": tf16(4)}, []Type{Scalar(FP16)}, ""},
		{"matmul", A{"x": tf16(3, 4), "y": tf16(3, 4)}, nil, "x's inner dim is 4, y's is 3"},
		{"matmul", A{"x": tf16(2, 3, 4), "y": tf16(3, 4, 5)}, nil, "batch dims"},
		// Linear.
		{"linear", A{"x": tf16(2, 5, 8), "weight": cf16(3, 8), "bias": cf16(3)}, []Type{Tensor(FP16, 2, 5, 3)}, ""},
		{"linear", A{"x": tf16(2, 5, 8), "weight": cf16(3, 8), "bias": cf16(4)}, nil, "bias has 4 elements"},
		{"linear", A{"x": tf16(2, 5, 8), "weight": tf16(3, 8)}, nil, `argument "weight" must be a constant`},
		{"linear", A{"x": tf16(2, 5, 8), "weight": cf16(3, 7)}, nil, "weight has 7 input features, x has 8"},
		// Reshape and transpose.
		{"reshape", A{"x": tf16(1, 768, 1, 512), "shape": cints(1, 12, 64, 512)}, []Type{Tensor(FP16, 1, 12, 64, 512)}, ""},
		{"reshape", A{"x": tf16(1, 768, 1, 512), "shape": cints(1, -1, 64, 512)}, []Type{Tensor(FP16, 1, 12, 64, 512)}, ""},
		{"reshape", A{"x": tf16(1, 768, 1, 512), "shape": cints(0, 12, 64, 0)}, []Type{Tensor(FP16, 1, 12, 64, 512)}, ""},
		{"reshape", A{"x": tf16(1, 768, 1, 512), "shape": cints(0, -1)}, nil, "only when the ranks match"},
		{"reshape", A{"x": tf16(4, 6), "shape": cints(-1, -1)}, nil, "more than one -1"},
		{"reshape", A{"x": tf16(4, 6), "shape": cints(5, 5)}, nil, "shape [5 5] has 25 elements, x has 24"},
		{"reshape", A{"x": tf16(4, 6), "shape": cints(5, -1)}, nil, "cannot infer -1"},
		{"reshape", A{"x": tf16(4, 6), "shape": tf16(2)}, nil, `argument "shape" has dtype fp16`},
		{"transpose", A{"x": tf16(1, 12, 64, 512), "perm": cints(0, 1, 3, 2)}, []Type{Tensor(FP16, 1, 12, 512, 64)}, ""},
		{"transpose", A{"x": tf16(2, 3, 4), "perm": cints(-1, 0, 1)}, []Type{Tensor(FP16, 4, 2, 3)}, ""},
		{"transpose", A{"x": tf16(2, 3, 4), "perm": cints(0, 0, 1)}, nil, "appears twice"},
		{"transpose", A{"x": tf16(2, 3, 4), "perm": cints(1, 0)}, nil, "has 2 values, x has rank 3"},
		// Slices.
		{"slice_by_size", A{"x": tf16(1, 2304, 1, 512), "begin": cints(0, 768, 0, 0), "size": cints(1, 768, 1, 512)}, []Type{Tensor(FP16, 1, 768, 1, 512)}, ""},
		{"slice_by_size", A{"x": tf16(1, 2304, 1, 512), "begin": cints(0, 768, 0, -12), "size": cints(1, -1, 1, -1)}, []Type{Tensor(FP16, 1, 1536, 1, 12)}, ""},
		{"slice_by_size", A{"x": tf16(1, 2304, 1, 512), "begin": cints(0, 2000, 0, 0), "size": cints(1, 768, 1, 512)}, nil, "dim 1: size 768 from begin 2000 runs past the dim of 2304"},
		{"slice_by_size", A{"x": tf16(4), "begin": cints(4), "size": cints(1)}, nil, "begin 4 is outside [0, 4)"},
		{"slice_by_size", A{"x": tf16(4, 4), "begin": cints(0), "size": cints(1, 1)}, nil, "begin has 1 values and size 2, x has rank 2"},
		{"slice_by_index", A{"x": tf16(10), "begin": cints(2), "end": cints(8), "stride": cints(3)}, []Type{Tensor(FP16, 2)}, ""},
		{"slice_by_index", A{"x": tf16(10), "begin": cints(-1), "end": cints(0), "stride": cints(-2)}, []Type{Tensor(FP16, 5)}, ""},
		{"slice_by_index", A{"x": tf16(4, 6), "begin": cints(1, 0), "end": cints(3, 0), "end_mask": cbools(false, true)}, []Type{Tensor(FP16, 2, 6)}, ""},
		{"slice_by_index", A{"x": tf16(4, 6), "begin": cints(-1, 5), "end": cints(0, 0), "begin_mask": cbools(false, false), "end_mask": cbools(false, true), "stride": cints(1, -1), "squeeze_mask": cbools(true, false)}, []Type{Tensor(FP16, 6)}, ""},
		{"slice_by_index", A{"x": tf16(4, 6), "begin": cints(3, 0), "end": cints(1, 6)}, nil, "dim 0: slice [3:1:1] of a dim of 4 is empty"},
		{"slice_by_index", A{"x": tf16(4), "begin": cints(0), "end": cints(4), "stride": cints(0)}, nil, "stride 0"},
		{"slice_by_index", A{"x": tf16(4), "begin": cints(0), "end": cints(4), "begin_mask": cbools(true, true)}, nil, `argument "begin_mask" has 2 elements, want 1`},
		// Concat and split.
		{"concat", A{"values": tuple(tf16(1, 768, 1, 512), tf16(1, 768, 1, 512), tf16(1, 2048, 1, 512)), "axis": cint(1)}, []Type{Tensor(FP16, 1, 3584, 1, 512)}, ""},
		{"concat", A{"values": tuple(tf16(2, 3), tf16(2, 3)), "axis": cint(-1), "interleave": cbool(true)}, []Type{Tensor(FP16, 2, 6)}, ""},
		{"concat", A{"values": tuple(tf16(2, 3), tf16(2, 4)), "axis": cint(1), "interleave": cbool(true)}, nil, "interleave needs equal shapes"},
		{"concat", A{"values": tuple(tf16(2, 3), tf16(3, 3)), "axis": cint(1)}, nil, "member 1 has shape [3 3], member 0 has [2 3] (only dim 1 may differ)"},
		{"concat", A{"values": tuple(tf16(2, 3), tf32(2, 3)), "axis": cint(1)}, nil, "member 1 has dtype fp32, member 0 has fp16"},
		{"concat", A{"values": tuple(tf16(2, 3)), "axis": cint(2)}, nil, "axis 2 is out of range for rank 2"},
		{"concat", A{"values": []ArgInfo{}, "axis": cint(0)}, nil, "empty tuple"},
		{"split", A{"x": tf16(1, 6, 4), "num_splits": cint(3), "axis": cint(1)}, []Type{Tensor(FP16, 1, 2, 4), Tensor(FP16, 1, 2, 4), Tensor(FP16, 1, 2, 4)}, ""},
		{"split", A{"x": tf16(1, 6, 4), "split_sizes": cints(1, 5), "axis": cint(-2)}, []Type{Tensor(FP16, 1, 1, 4), Tensor(FP16, 1, 5, 4)}, ""},
		{"split", A{"x": tf16(1, 6, 4), "num_splits": cint(4), "axis": cint(1)}, nil, "num_splits 4 does not divide"},
		{"split", A{"x": tf16(1, 6, 4), "split_sizes": cints(2, 2), "axis": cint(1)}, nil, "sum to 4, dim 1 has size 6"},
		{"split", A{"x": tf16(1, 6, 4), "axis": cint(1)}, nil, "needs num_splits or split_sizes"},
		// Cast, expand_dims, squeeze.
		{"cast", A{"x": tf32(1, 768, 1, 512), "dtype": cstr("fp16")}, []Type{Tensor(FP16, 1, 768, 1, 512)}, ""},
		{"cast", A{"x": tf32(3), "dtype": cstr("fp64")}, nil, `cannot cast to "fp64"`},
		{"expand_dims", A{"x": tf16(3, 4), "axes": cints(0, -1)}, []Type{Tensor(FP16, 1, 3, 4, 1)}, ""},
		{"expand_dims", A{"x": tf16(3, 4), "axes": cints(1)}, []Type{Tensor(FP16, 3, 1, 4)}, ""},
		{"expand_dims", A{"x": tf16(3, 4), "axes": cints(3)}, nil, "axis 3 is out of range for rank 3"},
		{"squeeze", A{"x": tf16(1, 3, 1, 4)}, []Type{Tensor(FP16, 3, 4)}, ""},
		{"squeeze", A{"x": tf16(1, 3, 1, 4), "axes": cints(0)}, []Type{Tensor(FP16, 3, 1, 4)}, ""},
		{"squeeze", A{"x": tf16(1, 1)}, []Type{Scalar(FP16)}, ""},
		{"squeeze", A{"x": tf16(1, 3, 1, 4), "axes": cints(1)}, nil, "dim 1 of x has size 3, not 1"},
	}
	for _, tc := range tests {
		d, ok := LookupOp(tc.op)
		if !ok {
			t.Fatalf("LookupOp(%q) failed", tc.op)
		}
		got, err := d.Infer(tc.args)
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s %v: got %v, want error containing %q", tc.op, tc.args, got, tc.err)
			} else if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %q does not contain %q", tc.op, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: unexpected error %v", tc.op, err)
			continue
		}
		if !slices.EqualFunc(got, tc.want, Type.Equal) {
			t.Errorf("%s: got %v, want %v", tc.op, got, tc.want)
		}
	}
}

func TestOpTable(t *testing.T) {
	want := []string{"add", "cast", "concat", "const", "conv", "exp", "expand_dims", "gelu", "layer_norm",
		"linear", "log", "matmul", "maximum", "minimum", "mul", "pow", "real_div", "reduce_max", "reduce_mean",
		"reduce_sum", "relu", "reshape", "rsqrt", "sigmoid", "silu", "slice_by_index", "slice_by_size",
		"softmax", "split", "sqrt", "squeeze", "sub", "tanh", "transpose"}
	var got []string
	for _, d := range Ops() {
		got = append(got, d.Name)
		if d.Doc == "" {
			t.Errorf("op %s has no Doc", d.Name)
		}
		for _, a := range d.Args {
			if a.Doc == "" {
				t.Errorf("op %s argument %s has no Doc", d.Name, a.Name)
			}
			if a.Default != nil && a.DTypes != nil && !slices.Contains(a.DTypes, a.Default.Type.DType) {
				t.Errorf("op %s argument %s: default %s is not an allowed dtype", d.Name, a.Name, a.Default.Type)
			}
			if a.Default != nil && a.Required {
				t.Errorf("op %s argument %s is required and has a default", d.Name, a.Name)
			}
			if a.SameAs != "" && d.Arg(a.SameAs) == nil {
				t.Errorf("op %s argument %s: SameAs names unknown %q", d.Name, a.Name, a.SameAs)
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Ops() = %v\nwant %v", got, want)
	}
	if _, ok := LookupOp("nonesuch"); ok {
		t.Error("LookupOp found an unknown op")
	}
}

func TestSliceByIndexBounds(t *testing.T) {
	// x[7:1:-3] of 10 elements takes 7, 4.
	start, stride, count, err := SliceByIndexBounds([]int{10}, []int{7}, []int{1}, []int{-3}, nil, nil, nil)
	if err != nil || start[0] != 7 || stride[0] != -3 || count[0] != 2 {
		t.Errorf("got %v %v %v %v, want [7] [-3] [2]", start, stride, count, err)
	}
	// begin_mask with a negative stride starts at the last element: x[::-1].
	start, _, count, err = SliceByIndexBounds([]int{5}, []int{0}, []int{0}, []int{-1}, []bool{true}, []bool{true}, nil)
	if err != nil || start[0] != 4 || count[0] != 5 {
		t.Errorf("x[::-1]: got start %v count %v %v, want [4] [5]", start, count, err)
	}
	// Ends beyond the dim clamp: x[2:100] of 5 takes 3.
	_, _, count, err = SliceByIndexBounds([]int{5}, []int{2}, []int{100}, nil, nil, nil, nil)
	if err != nil || count[0] != 3 {
		t.Errorf("x[2:100]: got count %v %v, want [3]", count, err)
	}
}

func TestConvParamsSame(t *testing.T) {
	// in 7, stride 2, kernel 3: out 4, total pad (4-1)*2+3-7 = 2, split 1/1; in 6: out 3, pad (3-1)*2+3-6 = 1.
	a := &opArgs{def: opTable["conv"], vals: A{"strides": cints(2, 2), "pad_type": cstr("same")}}
	p, err := convParams(a, []int{1, 3, 7, 6}, []int{8, 3, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.PadBegin, []int{1, 0}) || !slices.Equal(p.PadEnd, []int{1, 1}) {
		t.Errorf("same: pads %v %v, want [1 0] [1 1]", p.PadBegin, p.PadEnd)
	}
	a.vals["pad_type"] = cstr("same_lower")
	p, err = convParams(a, []int{1, 3, 7, 6}, []int{8, 3, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.PadBegin, []int{1, 1}) || !slices.Equal(p.PadEnd, []int{1, 0}) {
		t.Errorf("same_lower: pads %v %v, want [1 1] [1 0]", p.PadBegin, p.PadEnd)
	}
}
