package anetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// opCase is one op test: a program computing "out" from inputs drawn uniformly from [lo, hi), and the
// float64 reference of out.
type opCase struct {
	op     string                           // the op kind the case covers
	name   string                           // subtest name
	ins    []tin                            // program inputs
	lo, hi float64                          // input range
	body   string                           // MIL lines defining out
	ref    func(in [][]float64) []float64   // the expected out
	tol    tolerance                        // zero: fp16Tol
	outs   int                              // number of outputs out0, out1, ... (0: one output "out")
	refs   func(in [][]float64) [][]float64 // references of several outputs
}

func fp16In(name string, shape ...int) tin { return tin{name, mil.FP16, shape} }

// opCases returns the cases; rng draws the constant weights they embed.
func opCases(rng *rand.Rand) []opCase {
	x234 := []tin{fp16In("x", 2, 3, 4), fp16In("y", 3, 1)}
	bin := func(op string, f func(a, b float64) float64, lo, hi float64) opCase {
		return opCase{op: op, name: op + "_broadcast", ins: x234, lo: lo, hi: hi,
			body: fmt.Sprintf(`tensor<fp16, [2, 3, 4]> out = %s(x=x, y=y)[name=string("out")];`, op),
			ref:  func(in [][]float64) []float64 { return binaryRef(in[0], []int{2, 3, 4}, in[1], []int{3, 1}, f) }}
	}
	un := func(op string, f func(float64) float64, lo, hi float64, extra string) opCase {
		args := "x=x"
		if extra != "" {
			args += ", " + extra
		}
		return opCase{op: op, name: op, ins: []tin{fp16In("x", 1, 8, 1, 16)}, lo: lo, hi: hi,
			body: fmt.Sprintf(`tensor<fp16, [1, 8, 1, 16]> out = %s(%s)[name=string("out")];`, op, args),
			ref:  func(in [][]float64) []float64 { return unaryRef(in[0], f) }}
	}
	gelu := func(mode string, f func(float64) float64) opCase {
		c := un("gelu", f, -4, 4, `mode=string("`+mode+`")`)
		c.name = "gelu_" + mode
		return c
	}
	// Weights embedded as literals (fp16 values).
	w1x1 := uniform(rng, 5*8, -1, 1)
	wg := uniform(rng, 6*2*3*3, -1, 1)
	bg := uniform(rng, 6, -1, 1)
	w1d := uniform(rng, 4*3*3, -1, 1)
	lw := uniform(rng, 5*4, -1, 1)
	lb := uniform(rng, 5, -1, 1)
	gam := uniform(rng, 6, 0.5, 1.5)
	bet := uniform(rng, 6, -0.5, 0.5)
	f64 := func(x []float32) []float64 { return f64s(x) }

	cases := []opCase{
		{op: "pow", name: "pow_scalar_rms", ins: []tin{fp16In("x", 1, 1, 1, 16)}, lo: 0.01, hi: 4,
			body: `fp16 e = const()[name=string("e"), val=fp16(-0.5)];
				tensor<fp16, [1, 1, 1, 16]> out = pow(x=x, y=e)[name=string("out")];`,
			ref: func(in [][]float64) []float64 {
				return unaryRef(in[0], func(v float64) float64 { return 1 / math.Sqrt(v) })
			}},
		{op: "mul", name: "mul_scalar_literal", ins: []tin{fp16In("x", 1, 4, 1, 8)}, lo: -2, hi: 2,
			body: `tensor<fp16, [1, 4, 1, 8]> out = mul(x=x, y=fp16(0.125))[name=string("out")];`,
			ref:  func(in [][]float64) []float64 { return unaryRef(in[0], func(v float64) float64 { return v * 0.125 }) }},
		un("sqrt", math.Sqrt, 0, 4, ""),
		un("exp", math.Exp, -4, 4, ""),
		un("sigmoid", sigmoid, -6, 6, ""),
		un("silu", func(v float64) float64 { return v * sigmoid(v) }, -6, 6, ""),
		un("relu", func(v float64) float64 { return math.Max(v, 0) }, -2, 2, ""),
		un("tanh", math.Tanh, -3, 3, ""),
		un("rsqrt", func(v float64) float64 { return 1 / math.Sqrt(v) }, 0.1, 4, ""),
		un("log", math.Log, 0.1, 4, ""),
		func() opCase {
			c := un("rsqrt", func(v float64) float64 { return 1 / math.Sqrt(v+0.5) }, 0, 4, `epsilon=fp16(0.5)`)
			c.name = "rsqrt_epsilon"
			return c
		}(),
		gelu("EXACT", func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) }),
		gelu("TANH_APPROXIMATION", func(v float64) float64 {
			return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
		}),
		gelu("SIGMOID_APPROXIMATION", func(v float64) float64 { return v * sigmoid(1.702*v) }),

		{op: "conv", name: "conv_1x1", ins: []tin{fp16In("x", 1, 8, 1, 6)}, lo: -1, hi: 1,
			body: `tensor<fp16, [5, 8, 1, 1]> W = const()[name=string("W"), val=` + literal(mil.FP16, []int{5, 8, 1, 1}, w1x1) + `];
				tensor<fp16, [1, 5, 1, 6]> out = conv(x=x, weight=W)[name=string("out")];`,
			tol: tolerance{abs: 8.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := convRef(in[0], []int{1, 8, 1, 6}, f64(w1x1), []int{5, 8, 1, 1}, nil, []int{1, 1}, []int{1, 1}, []int{0, 0}, []int{0, 0}, 1)
				return o
			}},
		{op: "conv", name: "conv_grouped_strided_padded_dilated_bias", ins: []tin{fp16In("x", 2, 4, 5, 6)}, lo: -1, hi: 1,
			body: `tensor<fp16, [6, 2, 3, 3]> W = const()[name=string("W"), val=` + literal(mil.FP16, []int{6, 2, 3, 3}, wg) + `];
				tensor<fp16, [6]> B = const()[name=string("B"), val=` + literal(mil.FP16, []int{6}, bg) + `];
				tensor<int32, [2]> st = const()[name=string("st"), val=tensor<int32, [2]>([2, 1])];
				tensor<int32, [4]> pd = const()[name=string("pd"), val=tensor<int32, [4]>([1, 0, 1, 2])];
				tensor<int32, [2]> dl = const()[name=string("dl"), val=tensor<int32, [2]>([1, 2])];
				string pt = const()[name=string("pt"), val=string("custom")];
				int32 gr = const()[name=string("gr"), val=int32(2)];
				tensor<fp16, [2, 6, 2, 5]> out = conv(x=x, weight=W, bias=B, strides=st, pad=pd, pad_type=pt, dilations=dl, groups=gr)[name=string("out")];`,
			tol: tolerance{abs: 20.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := convRef(in[0], []int{2, 4, 5, 6}, f64(wg), []int{6, 2, 3, 3}, f64(bg), []int{2, 1}, []int{1, 2}, []int{1, 1}, []int{0, 2}, 2)
				return o
			}},
		{op: "conv", name: "conv_1d_same", ins: []tin{fp16In("x", 1, 3, 7)}, lo: -1, hi: 1,
			body: `tensor<fp16, [4, 3, 3]> W = const()[name=string("W"), val=` + literal(mil.FP16, []int{4, 3, 3}, w1d) + `];
				string pt = const()[name=string("pt"), val=string("same")];
				tensor<fp16, [1, 4, 7]> out = conv(x=x, weight=W, pad_type=pt)[name=string("out")];`,
			tol: tolerance{abs: 9.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := convRef(in[0], []int{1, 3, 1, 7}, f64(w1d), []int{4, 3, 1, 3}, nil, []int{1, 1}, []int{1, 1}, []int{0, 1}, []int{0, 1}, 1)
				return o
			}},
		{op: "matmul", name: "matmul_batch_broadcast_transposed", ins: []tin{fp16In("x", 2, 1, 4, 3), fp16In("y", 3, 5, 4)}, lo: -1, hi: 1,
			body: `bool bT = const()[name=string("bT"), val=bool(true)];
				tensor<fp16, [2, 3, 3, 5]> out = matmul(x=x, y=y, transpose_x=bT, transpose_y=bT)[name=string("out")];`,
			tol: tolerance{abs: 4.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := matmulRef(in[0], []int{2, 1, 4, 3}, in[1], []int{3, 5, 4}, true, true)
				return o
			}},
		{op: "matmul", name: "matmul_heads", ins: []tin{fp16In("x", 1, 3, 8, 4), fp16In("y", 1, 3, 4, 8)}, lo: -1, hi: 1,
			body: `tensor<fp16, [1, 3, 8, 8]> out = matmul(x=x, y=y)[name=string("out")];`,
			tol:  tolerance{abs: 4.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := matmulRef(in[0], []int{1, 3, 8, 4}, in[1], []int{1, 3, 4, 8}, false, false)
				return o
			}},
		{op: "matmul", name: "matmul_vector", ins: []tin{fp16In("x", 4), fp16In("y", 2, 4, 5)}, lo: -1, hi: 1,
			body: `tensor<fp16, [2, 5]> out = matmul(x=x, y=y)[name=string("out")];`,
			tol:  tolerance{abs: 4.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := matmulRef(in[0], []int{1, 4}, in[1], []int{2, 4, 5}, false, false)
				return o
			}},
		{op: "linear", name: "linear_bias", ins: []tin{fp16In("x", 2, 3, 4)}, lo: -1, hi: 1,
			body: `tensor<fp16, [5, 4]> W = const()[name=string("W"), val=` + literal(mil.FP16, []int{5, 4}, lw) + `];
				tensor<fp16, [5]> B = const()[name=string("B"), val=` + literal(mil.FP16, []int{5}, lb) + `];
				tensor<fp16, [2, 3, 5]> out = linear(x=x, weight=W, bias=B)[name=string("out")];`,
			tol: tolerance{abs: 5.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				o, _ := matmulRef(in[0], []int{2, 3, 4}, f64(lw), []int{5, 4}, false, true)
				for i := range o {
					o[i] += float64(lb[i%5])
				}
				return o
			}},
		{op: "softmax", name: "softmax_last", ins: []tin{fp16In("x", 1, 2, 5, 7)}, lo: -4, hi: 4,
			body: `int32 ax = const()[name=string("ax"), val=int32(-1)];
				tensor<fp16, [1, 2, 5, 7]> out = softmax(x=x, axis=ax)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return softmaxRef(in[0], []int{1, 2, 5, 7}, 3) }},
		{op: "softmax", name: "softmax_channels", ins: []tin{fp16In("x", 1, 6, 1, 9)}, lo: -4, hi: 4,
			body: `int32 ax = const()[name=string("ax"), val=int32(1)];
				tensor<fp16, [1, 6, 1, 9]> out = softmax(x=x, axis=ax)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return softmaxRef(in[0], []int{1, 6, 1, 9}, 1) }},
		{op: "reduce_sum", name: "reduce_sum_channels_keep", ins: []tin{fp16In("x", 1, 6, 1, 9)}, lo: -1, hi: 1,
			body: `tensor<int32, [1]> ax = const()[name=string("ax"), val=tensor<int32, [1]>([1])];
				bool kd = const()[name=string("kd"), val=bool(true)];
				tensor<fp16, [1, 1, 1, 9]> out = reduce_sum(x=x, axes=ax, keep_dims=kd)[name=string("out")];`,
			tol: tolerance{abs: 6.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 { return reduceRef(in[0], []int{1, 6, 1, 9}, []int{1}, "sum") }},
		{op: "reduce_sum", name: "reduce_sum_last_axis_runs", ins: []tin{fp16In("x", 1, 40, 1, 32)}, lo: -1, hi: 1,
			// the channels moved last: each sum a contiguous run (the emulator's one-column path)
			body: `tensor<int32, [4]> pm = const()[name=string("pm"), val=tensor<int32, [4]>([0, 3, 2, 1])];
				tensor<fp16, [1, 32, 1, 40]> xt = transpose(x=x, perm=pm)[name=string("xt")];
				tensor<int32, [1]> ax = const()[name=string("ax"), val=tensor<int32, [1]>([3])];
				bool kd = const()[name=string("kd"), val=bool(true)];
				tensor<fp16, [1, 32, 1, 1]> s = reduce_sum(x=xt, axes=ax, keep_dims=kd)[name=string("s")];
				tensor<fp16, [1, 1, 1, 32]> out = transpose(x=s, perm=pm)[name=string("out")];`,
			tol: tolerance{abs: 40.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 { return reduceRef(in[0], []int{1, 40, 1, 32}, []int{1}, "sum") }},
		{op: "reduce_mean", name: "reduce_mean_split_axes", ins: []tin{fp16In("x", 3, 4, 5)}, lo: -1, hi: 1,
			body: `tensor<int32, [2]> ax = const()[name=string("ax"), val=tensor<int32, [2]>([0, -1])];
				tensor<fp16, [4]> out = reduce_mean(x=x, axes=ax)[name=string("out")];`,
			tol: tolerance{abs: 2.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 { return reduceRef(in[0], []int{3, 4, 5}, []int{0, 2}, "mean") }},
		{op: "reduce_max", name: "reduce_max_all", ins: []tin{fp16In("x", 2, 3, 4)}, lo: -3, hi: 3,
			body: `tensor<fp16, []> out = reduce_max(x=x)[name=string("out")];`,
			ref:  func(in [][]float64) []float64 { return reduceRef(in[0], []int{2, 3, 4}, []int{0, 1, 2}, "max") }},
		{op: "layer_norm", name: "layer_norm_last", ins: []tin{fp16In("x", 2, 3, 6)}, lo: -2, hi: 2,
			body: `tensor<int32, [1]> ax = const()[name=string("ax"), val=tensor<int32, [1]>([-1])];
				tensor<fp16, [6]> G = const()[name=string("G"), val=` + literal(mil.FP16, []int{6}, gam) + `];
				tensor<fp16, [6]> B = const()[name=string("B"), val=` + literal(mil.FP16, []int{6}, bet) + `];
				fp16 eps = const()[name=string("eps"), val=fp16(0.001)];
				tensor<fp16, [2, 3, 6]> out = layer_norm(x=x, axes=ax, gamma=G, beta=B, epsilon=eps)[name=string("out")];`,
			tol: tolerance{abs: 4.0 / 1024, rel: 1.0 / 1024},
			ref: func(in [][]float64) []float64 {
				x, out := in[0], make([]float64, len(in[0]))
				for r := 0; r < 6; r++ {
					row := x[r*6 : r*6+6]
					var m, v float64
					for _, a := range row {
						m += a / 6
					}
					for _, a := range row {
						v += (a - m) * (a - m) / 6
					}
					for j, a := range row {
						out[r*6+j] = (a-m)/math.Sqrt(v+float64(float32(0.0010004)))*float64(gam[j]) + float64(bet[j])
					}
				}
				return out
			}},
		{op: "reshape", name: "reshape", ins: []tin{fp16In("x", 1, 6, 1, 4)}, lo: -1, hi: 1,
			body: `tensor<int32, [4]> sh = const()[name=string("sh"), val=tensor<int32, [4]>([1, 2, 3, 4])];
				tensor<fp16, [1, 2, 3, 4]> out = reshape(x=x, shape=sh)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return in[0] }},
		{op: "transpose", name: "transpose_heads", ins: []tin{fp16In("x", 1, 3, 4, 5)}, lo: -1, hi: 1,
			body: `tensor<int32, [4]> pm = const()[name=string("pm"), val=tensor<int32, [4]>([0, 1, 3, 2])];
				tensor<fp16, [1, 3, 5, 4]> out = transpose(x=x, perm=pm)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return transposeRef(in[0], []int{1, 3, 4, 5}, []int{0, 1, 3, 2}) }},
		{op: "transpose", name: "transpose_general", ins: []tin{fp16In("x", 2, 3, 4)}, lo: -1, hi: 1,
			body: `tensor<int32, [3]> pm = const()[name=string("pm"), val=tensor<int32, [3]>([2, 0, 1])];
				tensor<fp16, [4, 2, 3]> out = transpose(x=x, perm=pm)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return transposeRef(in[0], []int{2, 3, 4}, []int{2, 0, 1}) }},
		{op: "slice_by_size", name: "slice_by_size_spatial", ins: []tin{fp16In("x", 1, 4, 1, 10)}, lo: -1, hi: 1,
			body: `tensor<int32, [4]> b = const()[name=string("b"), val=tensor<int32, [4]>([0, 1, 0, 3])];
				tensor<int32, [4]> s = const()[name=string("s"), val=tensor<int32, [4]>([1, 2, 1, -1])];
				tensor<fp16, [1, 2, 1, 7]> out = slice_by_size(x=x, begin=b, size=s)[name=string("out")];`,
			ref: func(in [][]float64) []float64 {
				var o []float64
				for c := 1; c < 3; c++ {
					o = append(o, in[0][c*10+3:c*10+10]...)
				}
				return o
			}},
		{op: "slice_by_index", name: "slice_by_index_strided_masked", ins: []tin{fp16In("x", 3, 4, 6)}, lo: -1, hi: 1,
			body: `tensor<int32, [3]> b = const()[name=string("b"), val=tensor<int32, [3]>([1, 0, 5])];
				tensor<int32, [3]> e = const()[name=string("e"), val=tensor<int32, [3]>([2, 4, 0])];
				tensor<int32, [3]> s = const()[name=string("s"), val=tensor<int32, [3]>([1, 2, -2])];
				tensor<bool, [3]> bm = const()[name=string("bm"), val=tensor<bool, [3]>([false, true, false])];
				tensor<bool, [3]> em = const()[name=string("em"), val=tensor<bool, [3]>([false, false, true])];
				tensor<bool, [3]> sm = const()[name=string("sm"), val=tensor<bool, [3]>([true, false, false])];
				tensor<fp16, [2, 3]> out = slice_by_index(x=x, begin=b, end=e, stride=s, begin_mask=bm, end_mask=em, squeeze_mask=sm)[name=string("out")];`,
			ref: func(in [][]float64) []float64 {
				// x[1, 0:4:2, 5::-2]
				var o []float64
				for j := 0; j < 4; j += 2 {
					for k := 5; k >= 0; k -= 2 {
						o = append(o, in[0][(1*4+j)*6+k])
					}
				}
				return o
			}},
		{op: "concat", name: "concat_channels", ins: []tin{fp16In("x", 1, 2, 1, 3), fp16In("y", 1, 3, 1, 3)}, lo: -1, hi: 1,
			body: `int32 ax = const()[name=string("ax"), val=int32(1)];
				tensor<fp16, [1, 5, 1, 3]> out = concat(values=(x, y), axis=ax)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return append(append([]float64{}, in[0]...), in[1]...) }},
		{op: "concat", name: "concat_last_interleave", ins: []tin{fp16In("x", 2, 3), fp16In("y", 2, 3)}, lo: -1, hi: 1,
			body: `int32 ax = const()[name=string("ax"), val=int32(-1)];
				bool il = const()[name=string("il"), val=bool(true)];
				tensor<fp16, [2, 6]> out = concat(values=(x, y), axis=ax, interleave=il)[name=string("out")];`,
			ref: func(in [][]float64) []float64 {
				var o []float64
				for r := 0; r < 2; r++ {
					for j := 0; j < 3; j++ {
						o = append(o, in[0][r*3+j], in[1][r*3+j])
					}
				}
				return o
			}},
		{op: "split", name: "split_sizes", ins: []tin{fp16In("x", 2, 5)}, lo: -1, hi: 1, outs: 2,
			body: `tensor<int32, [2]> ss = const()[name=string("ss"), val=tensor<int32, [2]>([2, 3])];
				int32 ax = const()[name=string("ax"), val=int32(1)];
				tensor<fp16, [2, 2]> out0, tensor<fp16, [2, 3]> out1 = split(x=x, split_sizes=ss, axis=ax)[name=string("sp")];`,
			refs: func(in [][]float64) [][]float64 {
				x := in[0]
				return [][]float64{{x[0], x[1], x[5], x[6]}, {x[2], x[3], x[4], x[7], x[8], x[9]}}
			}},
		{op: "split", name: "split_num_channels", ins: []tin{fp16In("x", 1, 4, 1, 3)}, lo: -1, hi: 1, outs: 2,
			body: `int32 n = const()[name=string("n"), val=int32(2)];
				int32 ax = const()[name=string("ax"), val=int32(1)];
				tensor<fp16, [1, 2, 1, 3]> out0, tensor<fp16, [1, 2, 1, 3]> out1 = split(x=x, num_splits=n, axis=ax)[name=string("sp")];`,
			refs: func(in [][]float64) [][]float64 { return [][]float64{in[0][:6], in[0][6:]} }},
		{op: "cast", name: "cast_fp32_to_fp16", ins: []tin{{"x", mil.FP32, []int{1, 3, 1, 4}}}, lo: -70000, hi: 70000,
			body: `string d = const()[name=string("d"), val=string("fp16")];
				tensor<fp16, [1, 3, 1, 4]> out = cast(x=x, dtype=d)[name=string("out")];`,
			ref: func(in [][]float64) []float64 {
				return unaryRef(in[0], func(v float64) float64 {
					if math.Abs(v) >= 65520 {
						return math.Copysign(math.Inf(1), v)
					}
					return v
				})
			}},
		{op: "cast", name: "cast_fp16_to_fp32", ins: []tin{fp16In("x", 1, 3, 1, 4)}, lo: -3, hi: 3,
			body: `string d = const()[name=string("d"), val=string("fp32")];
				tensor<fp32, [1, 3, 1, 4]> out = cast(x=x, dtype=d)[name=string("out")];`,
			tol: tolerance{},
			ref: func(in [][]float64) []float64 { return in[0] }},
		{op: "expand_dims", name: "expand_dims", ins: []tin{fp16In("x", 3, 4)}, lo: -1, hi: 1,
			body: `tensor<int32, [2]> ax = const()[name=string("ax"), val=tensor<int32, [2]>([0, 2])];
				tensor<fp16, [1, 3, 1, 4]> out = expand_dims(x=x, axes=ax)[name=string("out")];`,
			ref: func(in [][]float64) []float64 { return in[0] }},
		{op: "squeeze", name: "squeeze", ins: []tin{fp16In("x", 1, 3, 1, 4)}, lo: -1, hi: 1,
			body: `tensor<fp16, [3, 4]> out = squeeze(x=x)[name=string("out")];`,
			ref:  func(in [][]float64) []float64 { return in[0] }},
	}
	for _, o := range binaryOps {
		cases = append(cases, bin(o.op, o.f, o.lo, o.hi))
	}
	return cases
}

// binaryOps are the elementwise binary ops with their float64 definitions and input ranges.
var binaryOps = []struct {
	op     string
	f      func(a, b float64) float64
	lo, hi float64
}{
	{"add", func(a, b float64) float64 { return a + b }, -2, 2},
	{"sub", func(a, b float64) float64 { return a - b }, -2, 2},
	{"mul", func(a, b float64) float64 { return a * b }, -2, 2},
	{"real_div", func(a, b float64) float64 { return a / b }, 0.5, 2},
	{"pow", math.Pow, 0.5, 2},
	{"maximum", math.Max, -2, 2},
	{"minimum", math.Min, -2, 2},
}

// testOps runs every case and checks that every op of the table has one.
func testOps(t *testing.T, b ane.Backend) {
	rng := rand.New(rand.NewPCG(7, 11))
	cases := append(opCases(rng), hardwareOpCases()...)
	covered := map[string]bool{"const": true}
	for _, c := range cases {
		covered[c.op] = true
	}
	for _, d := range mil.Ops() {
		if !covered[d.Name] {
			t.Errorf("op %s of the op table has no conformance case", d.Name)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := []string{"out"}
			if c.outs > 0 {
				outs = outs[:0]
				for i := range c.outs {
					outs = append(outs, fmt.Sprintf("out%d", i))
				}
			}
			src := program(c.ins, c.body, outs...)
			k := compile(t, b, src, nil)
			if len(k.Inputs()) != len(c.ins) || len(k.Outputs()) != len(outs) {
				t.Fatalf("kernel has %d inputs and %d outputs, want %d and %d", len(k.Inputs()), len(k.Outputs()), len(c.ins), len(outs))
			}
			var in [][]float64
			for i, s := range k.Inputs() {
				if s.Name() != c.ins[i].name {
					t.Errorf("input %d is %q, want %q", i, s.Name(), c.ins[i].name)
				}
				vals := uniform(rng, prod(c.ins[i].shape), c.lo, c.hi)
				if c.ins[i].dtype == mil.FP32 {
					vals = uniform32(rng, len(vals), c.lo, c.hi)
				}
				in = append(in, writeAll(t, s, vals))
			}
			evalOnce(t, k)
			var want [][]float64
			if c.refs != nil {
				want = c.refs(in)
			} else {
				want = [][]float64{c.ref(in)}
			}
			tol := c.tol
			if tol == (tolerance{}) && !strings.HasPrefix(c.name, "cast_fp16_to_fp32") {
				tol = fp16Tol
			}
			for i, s := range k.Outputs() {
				near(t, fmt.Sprintf("%s output %s", c.name, s.Name()), readAll(t, s), want[i], tol)
			}
		})
	}
}
