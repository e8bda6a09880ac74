package anetest

import (
	"fmt"
	"math"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// The hardware-eligible op cases: each proven op (ane.HardwareOps) in a program the ANE accepts, as the
// reference kernels are written: one fp16 input [1, C, 1, W] with W a multiple of 32, one output, and a
// conv anchor. A binary op takes its two operands from the two halves of the input's columns; the result
// goes through a 1x1 conv with an identity weight, which changes no value (each output is one fp16 value
// times 1, accumulated in fp32 and rounded once).

// hwChannels and hwWidth are the shape of a hardware case's operands.
const hwChannels, hwWidth = 8, 32

// identityConv returns the MIL lines of out = conv(identity, r) over c channels of width w, as the
// reference writes a conv: every optional argument spelled out.
func identityConv(c, w int) string {
	eye := make([]float64, c*c)
	for i := range c {
		eye[i*c+i] = 1
	}
	return fmt.Sprintf(`string pt = const()[name=string("pt"), val=string("valid")];
		tensor<int32, [2]> st = const()[name=string("st"), val=tensor<int32, [2]>([1, 1])];
		tensor<int32, [4]> pd = const()[name=string("pd"), val=tensor<int32, [4]>([0, 0, 0, 0])];
		tensor<int32, [2]> dl = const()[name=string("dl"), val=tensor<int32, [2]>([1, 1])];
		int32 gr = const()[name=string("gr"), val=int32(1)];
		tensor<fp16, [%d, %d, 1, 1]> I = const()[name=string("I"), val=%s];
		tensor<fp16, [1, %d, 1, %d]> out = conv(dilations=dl, groups=gr, pad=pd, pad_type=pt, strides=st, weight=I, x=r)[name=string("out")];`,
		c, c, literalF64(mil.FP16, []int{c, c, 1, 1}, eye), c, w)
}

// literalF64 spells a tensor literal of float64 values.
func literalF64(d mil.DType, shape []int, vals []float64) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("%s([%s])", mil.Tensor(d, shape...), strings.Join(parts, ", "))
}

// halves splits a [C, 2W] input into its column halves [C, W].
func halves(x []float64, c, w int) (a, b []float64) {
	for ch := range c {
		a = append(a, x[ch*2*w:ch*2*w+w]...)
		b = append(b, x[ch*2*w+w:(ch+1)*2*w]...)
	}
	return a, b
}

// hardwareOpCases returns the hardware-eligible op cases.
func hardwareOpCases() []opCase {
	c, w := hwChannels, hwWidth
	typ := mil.Tensor(mil.FP16, 1, c, 1, w).String()
	bin := func(op string, f func(a, b float64) float64, lo, hi float64) opCase {
		return opCase{op: op, name: "hw_" + op, ins: []tin{fp16In("x", 1, c, 1, 2*w)}, lo: lo, hi: hi,
			body: fmt.Sprintf(`tensor<fp16, [1, %[1]d, 1, %[2]d]> a = slice_by_size(x=x, begin=tensor<int32, [4]>([0, 0, 0, 0]), size=tensor<int32, [4]>([1, %[1]d, 1, %[2]d]))[name=string("a")];
				tensor<fp16, [1, %[1]d, 1, %[2]d]> b = slice_by_size(x=x, begin=tensor<int32, [4]>([0, 0, 0, %[2]d]), size=tensor<int32, [4]>([1, %[1]d, 1, %[2]d]))[name=string("b")];
				%[3]s r = %[4]s(x=a, y=b)[name=string("r")];
				`, c, w, typ, op) + identityConv(c, w),
			ref: func(in [][]float64) []float64 {
				a, b := halves(in[0], c, w)
				out := make([]float64, len(a))
				for i := range a {
					out[i] = f(a[i], b[i])
				}
				return out
			}}
	}
	un := func(op string, f func(float64) float64, lo, hi float64) opCase {
		return opCase{op: op, name: "hw_" + op, ins: []tin{fp16In("x", 1, c, 1, w)}, lo: lo, hi: hi,
			body: fmt.Sprintf(`%s r = %s(x=x)[name=string("r")];
				`, typ, op) + identityConv(c, w),
			ref: func(in [][]float64) []float64 { return unaryRef(in[0], f) }}
	}
	var cases []opCase
	for _, o := range binaryOps {
		if ane.HardwareOps[o.op].Support == ane.Proven {
			cases = append(cases, bin(o.op, o.f, o.lo, o.hi))
		}
	}
	return append(cases,
		un("relu", func(v float64) float64 { return math.Max(v, 0) }, -2, 2),
		un("tanh", math.Tanh, -3, 3),
		un("sigmoid", sigmoid, -6, 6),
		opCase{op: "softmax", name: "hw_softmax", ins: []tin{fp16In("x", 1, c, 1, w)}, lo: -3, hi: 3,
			body: fmt.Sprintf(`%s r = softmax(x=x, axis=int32(1))[name=string("r")];
				`, typ) + identityConv(c, w),
			ref: func(in [][]float64) []float64 { return softmaxChannels(in[0], c, w) }},
		opCase{op: "reduce_sum", name: "hw_reduce_sum", ins: []tin{fp16In("x", 1, c, 1, w)}, lo: -1, hi: 1,
			body: fmt.Sprintf(`tensor<fp16, [1, 1, 1, %d]> r = reduce_sum(x=x, axes=tensor<int32, [1]>([1]), keep_dims=bool(true))[name=string("r")];
				`, w) + identityConv(1, w),
			ref: func(in [][]float64) []float64 {
				out := make([]float64, w)
				for ch := range c {
					for t := range w {
						out[t] += in[0][ch*w+t]
					}
				}
				return out
			}},
		opCase{op: "cast", name: "hw_cast_fp32_boundary", ins: []tin{{"x", mil.FP32, []int{1, c, 1, w}}}, lo: -3, hi: 3,
			body: fmt.Sprintf(`tensor<fp16, [1, %[1]d, 1, %[2]d]> r = cast(x=x, dtype=string("fp16"))[name=string("r")];
				`, c, w) + strings.NewReplacer("> out = conv", "> y = conv", `name=string("out")`, `name=string("y")`).Replace(identityConv(c, w)) + fmt.Sprintf(`
				tensor<fp32, [1, %d, 1, %d]> out = cast(x=y, dtype=string("fp32"))[name=string("out")];`, c, w),
			tol: fp16Tol,
			ref: func(in [][]float64) []float64 { return in[0] }},
	)
}

// softmaxChannels is the softmax over the channels of each column of a [C, W] tensor.
func softmaxChannels(x []float64, c, w int) []float64 {
	out := make([]float64, len(x))
	for t := range w {
		m := math.Inf(-1)
		for ch := range c {
			m = math.Max(m, x[ch*w+t])
		}
		sum := 0.0
		for ch := range c {
			out[ch*w+t] = math.Exp(x[ch*w+t] - m)
			sum += out[ch*w+t]
		}
		for ch := range c {
			out[ch*w+t] /= sum
		}
	}
	return out
}
