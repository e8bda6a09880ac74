package anetest

import (
	"errors"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Refusal is a program that passes mil.Check but breaks one of the hardware's rules (ane.Rules), with
// the message every backend but a relaxed emulator must refuse it with.
type Refusal struct {
	Rule string // the ane.Rule it breaks
	Name string // subtest name
	Src  string // MIL text
	Want string // a part of the refusal's message
}

// Refusals returns one program per rule that can be broken by a program that type-checks, each
// otherwise eligible (one fp16 input and output 32 wide, a conv anchor), so that the refusal is the
// rule's.
func Refusals() []Refusal {
	x := []tin{fp16In("x", 1, 4, 1, 32)}
	typ := mil.Tensor(mil.FP16, 1, 4, 1, 32).String()
	anchored := func(ins []tin, body string) string {
		return program(ins, body+"\n"+identityConv(4, 32), "out")
	}
	return []Refusal{
		{ane.RuleIOWidth, "width_below_32", program([]tin{fp16In("x", 1, 4, 1, 16)},
			`tensor<fp16, [1, 4, 1, 16]> r = relu(x=x)[name=string("r")];
				`+identityConv(4, 16), "out"),
			"input `x` (3:50) has width 16: the ANE needs at least 32 (narrower I/O compiles, then fails at dispatch); pad it to 32"},
		{ane.RuleIOWidth, "width_not_multiple", program([]tin{fp16In("x", 1, 4, 1, 48)},
			`tensor<fp16, [1, 4, 1, 48]> r = relu(x=x)[name=string("r")];
				`+identityConv(4, 48), "out"),
			"output `out` (12:11) has width 48: the ANE needs a multiple of 32 (else it returns rows laid out at the next multiple); pad it to 64"},
		{ane.RuleIORank, "rank_2_input", anchored([]tin{fp16In("x", 4, 32)},
			typ+` r = reshape(x=x, shape=tensor<int32, [4]>([1, 4, 1, 32]))[name=string("r")];`),
			"input `x` (3:44) has rank 2 (tensor<fp16, [4, 32]>): the ANE's I/O are rank-4 [N, C, H, W] tensors"},
		{ane.RuleIORank, "scalar_input", anchored(append(x, tin{"s", mil.FP16, nil}),
			typ+` r = mul(x=x, y=s)[name=string("r")];`),
			"input `s` (3:70) is a scalar (tensor<fp16, []>): the ANE's I/O are rank-4 [N, C, H, W] tensors"},
		{ane.RuleIODType, "int32_input", anchored([]tin{{"i", mil.Int32, []int{1, 4, 1, 32}}},
			typ+` r = cast(x=i, dtype=string("fp16"))[name=string("r")];`),
			"input `i` (3:51) is int32: the ANE's surfaces hold fp16 or fp32"},
		{ane.RuleFP16, "fp32_arithmetic", anchored([]tin{{"x", mil.FP32, []int{1, 4, 1, 32}}},
			`tensor<fp32, [1, 4, 1, 32]> a = add(x=x, y=x)[name=string("a")];
				`+typ+` r = cast(x=a, dtype=string("fp16"))[name=string("r")];`),
			"op `a` (add) (4:9) computes in fp32: the ANE computes in fp16 only"},
		{ane.RuleOp, "exp", anchored(x, typ+` r = exp(x=x)[name=string("r")];`),
			"op `r` (exp) (4:9) is refused by the ANE: standalone exp is refused (no transcendentals)"},
		{ane.RuleOp, "reduce_mean", anchored(x, `tensor<fp16, [1, 4, 1, 1]> m = reduce_mean(x=x, axes=tensor<int32, [1]>([3]), keep_dims=bool(true))[name=string("m")];
				`+typ+` r = mul(x=x, y=m)[name=string("r")];`),
			"op `m` (reduce_mean) (4:9) is refused by the ANE: reduce_mean passes compile and fails at dispatch"},
		{ane.RuleMatmulBatch, "matmul_batch_broadcast", program(x, `tensor<fp16, [1, 4, 4, 8]> a = reshape(x=x, shape=tensor<int32, [4]>([1, 4, 4, 8]))[name=string("a")];
				tensor<fp16, [1, 1, 8, 8]> w = const()[name=string("w"), val=`+literal(mil.FP16, []int{1, 1, 8, 8}, fill(64, 0.5))+`];
				tensor<fp16, [1, 4, 4, 8]> m = matmul(x=a, y=w)[name=string("m")];
				`+typ+` out = reshape(x=m, shape=tensor<int32, [4]>([1, 4, 1, 32]))[name=string("out")];`, "out"),
			"op `m` (matmul) (6:9) broadcasts batch dims [1 4] against [1 1]: the ANE does not lower a batch-broadcast matmul"},
		{ane.RuleConvWidth, "conv_kernel_16_wide", program(x, `tensor<fp16, [4, 4, 1, 16]> w = const()[name=string("w"), val=`+literal(mil.FP16, []int{4, 4, 1, 16}, fill(256, 0.25))+`];
				`+typ+` out = conv(dilations=tensor<int32, [2]>([1, 1]), groups=int32(1), pad=tensor<int32, [4]>([0, 0, 8, 7]), pad_type=string("custom"), strides=tensor<int32, [2]>([1, 1]), weight=w, x=x)[name=string("out")];`, "out"),
			"op `out` (conv) (5:9) has a kernel 16 wide: the ANE compiles at most"},
		{ane.RuleDeadCode, "dead_width_1", anchored(x, `tensor<fp16, [1, 4, 1, 1]> d = reduce_sum(x=x, axes=tensor<int32, [1]>([3]), keep_dims=bool(true))[name=string("d")];
				`+typ+` r = relu(x=x)[name=string("r")];`),
			"op `d` (reduce_sum) (4:9) is dead (no output depends on it) and reduces to width 1: the ANE refuses such a program"},
		{ane.RuleAnchor, "no_anchor", program(x, typ+` out = mul(x=x, y=fp16(2.0))[name=string("out")];`, "out"),
			"program (1:1) holds no conv or matmul: the ANE may leave a purely elementwise program on the CPU and refuse it at load"},
	}
}

// testRefusals compiles every Refusals program: a backend that is not relaxed must refuse each with an
// *ane.IneligibleError carrying the rule's message (and, for a refused op, wrapping ane.ErrUnsupportedOp)
// before anything reaches its device; a relaxed emulator is not asked to.
func testRefusals(t *testing.T, b ane.Backend) {
	if relaxed(b) {
		t.Skip("a relaxed backend runs what the ANE refuses")
	}
	for _, r := range Refusals() {
		t.Run(r.Name, func(t *testing.T) {
			p, err := mil.Parse("refused.mil", []byte(r.Src))
			if err != nil {
				t.Fatalf("parse: %v\n%s", err, r.Src)
			}
			if err := mil.Check(p); err != nil {
				t.Fatalf("the program must type-check: %v\n%s", err, r.Src)
			}
			k, err := b.Compile(p, nil)
			if err == nil {
				k.Close()
				t.Fatalf("compiled a program that breaks %s\n%s", r.Rule, r.Src)
			}
			var ie *ane.IneligibleError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), r.Want) {
				t.Fatalf("error %v\nwant an *ane.IneligibleError containing %q", err, r.Want)
			}
			if found := ie.Verdict.With(ane.Refused); len(found) == 0 || !containsRule(found, r.Rule) {
				t.Errorf("refused for %v, want rule %s among them", found, r.Rule)
			}
			if got := errors.Is(err, ane.ErrUnsupportedOp); got != (r.Rule == ane.RuleOp) {
				t.Errorf("errors.Is(err, ErrUnsupportedOp) = %v for rule %s", got, r.Rule)
			}
		})
	}
}

func containsRule(fs []ane.Finding, rule string) bool {
	for _, f := range fs {
		if f.Rule == rule {
			return true
		}
	}
	return false
}

// fill returns n copies of v.
func fill(n int, v float32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = v
	}
	return out
}
