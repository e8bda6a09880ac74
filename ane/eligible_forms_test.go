package ane

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// formSrc is a program with one op, y, whose form is under test; %[1]s is y's type and %[2]s its op.
const formSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 8, 2, 32]> x) {
        %[1]s y = %[2]s[name=string("y")];
    } -> (y);
}
`

// Each proven op is proven only in the forms a reference ran (rule op-form); another value of its
// attribute is unknown, with a message naming the value.
func TestEligibleOpForms(t *testing.T) {
	ints := func(v ...int) string {
		s := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(v)), ", "), "[]")
		return fmt.Sprintf("tensor<int32, [%d]>([%s])", len(v), s)
	}
	for _, c := range []struct {
		typ, op string
		proven  bool
		names   string // what the message says of the value, when unknown
	}{
		{"tensor<fp16, [1, 8, 32, 2]>", "transpose(x=x, perm=" + ints(0, 1, 3, 2) + ")", true, ""},
		{"tensor<fp16, [1, 2, 8, 32]>", "transpose(x=x, perm=" + ints(0, 2, 1, 3) + ")", false, "perm [0 2 1 3]"},
		{"tensor<fp16, [1, 16, 2, 32]>", "concat(values=(x, x), axis=int32(1), interleave=bool(false))", true, ""},
		{"tensor<fp16, [1, 8, 2, 64]>", "concat(values=(x, x), axis=int32(-1), interleave=bool(false))", true, ""},
		{"tensor<fp16, [1, 8, 4, 32]>", "concat(values=(x, x), axis=int32(2), interleave=bool(false))", false, "axis 2"},
		{"tensor<fp16, [1, 8, 2, 32]>", "softmax(x=x, axis=int32(-1))", true, ""},
		{"tensor<fp16, [1, 8, 2, 32]>", "softmax(x=x, axis=int32(3))", true, ""},
		{"tensor<fp16, [1, 8, 2, 32]>", "softmax(x=x, axis=int32(1))", false, "axis 1"},
		{"tensor<fp16, [1, 4, 2, 32]>", "slice_by_size(x=x, begin=" + ints(0, 4, 0, 0) + ", size=" + ints(1, 4, 2, 32) + ")", true, ""},
		{"tensor<fp16, [1, 8, 2, 16]>", "slice_by_size(x=x, begin=" + ints(0, 0, 0, 16) + ", size=" + ints(1, 8, 2, 16) + ")", true, ""},
		{"tensor<fp16, [1, 8, 1, 32]>", "slice_by_size(x=x, begin=" + ints(0, 0, 1, 0) + ", size=" + ints(1, 8, 1, 32) + ")", false, "offset 1 on axis 2"},
		{"tensor<fp16, [1, 16, 1, 32]>", "reshape(x=x, shape=" + ints(1, 16, 1, 32) + ")", true, ""},
		{"tensor<fp16, [1, 8, 64, 1]>", "reshape(x=x, shape=" + ints(1, 8, 64, 1) + ")", true, ""},
		{"tensor<fp16, [1, 2, 16, 16]>", "reshape(x=x, shape=" + ints(1, 2, 16, 16) + ")", false, "[1 8 2 32] to [1 2 16 16]"},
	} {
		v := Eligible(parse(t, fmt.Sprintf(formSrc, c.typ, c.op)))
		var f *Finding
		for i := range v.Findings {
			if strings.HasPrefix(v.Findings[i].String(), "op `y`") {
				f = &v.Findings[i]
			}
		}
		if f == nil {
			t.Fatalf("%s: no finding for y in %v", c.op, v.Findings)
		}
		switch {
		case c.proven && f.Support != Proven:
			t.Errorf("%s: %s [%s], want proven", c.op, f, f.Rule)
		case !c.proven && (f.Support != Unknown || f.Rule != RuleForm || !strings.Contains(f.String(), c.names) || f.Fix == ""):
			t.Errorf("%s: %s [%s] (fix %q), want unknown by rule %s naming %q", c.op, f, f.Rule, f.Fix, RuleForm, c.names)
		}
	}
}

// ReshapeSteps goes from any rank-4 shape to any other of the same size in proven reshapes, with one
// step between where one exists, its spatial extents no larger than the ends' largest.
func TestReshapeSteps(t *testing.T) {
	prod := func(s []int) int { return s[0] * s[1] * s[2] * s[3] }
	for _, c := range []struct {
		f, t  []int
		steps int
	}{
		{[]int{1, 8, 2, 32}, []int{1, 16, 1, 32}, 1},
		{[]int{1, 64, 512, 512}, []int{1, 8 * 512, 1, 8 * 512}, 2}, // stories260K's probabilities as rows
		{[]int{1, 8 * 512, 1, 8 * 512}, []int{1, 64, 512, 512}, 2},
		{[]int{1, 256, 1, 3072}, []int{1, 4, 64, 3072}, 1},
		{[]int{1, 6, 1, 35}, []int{1, 5, 7, 6}, 3},
		{[]int{1, 2, 1, 30}, []int{1, 5, 2, 6}, 2},
		{[]int{1, 2, 3, 5}, []int{1, 5, 3, 2}, 3},
		{[]int{1, 4, 3, 5}, []int{1, 6, 1, 10}, 2},
	} {
		steps := ReshapeSteps(c.f, c.t)
		if len(steps) != c.steps || !slices.Equal(steps[len(steps)-1], c.t) {
			t.Errorf("%v -> %v: steps %v, want %d ending in the target", c.f, c.t, steps, c.steps)
		}
		from := c.f
		for _, s := range steps {
			if !ProvenReshape(from, s) || prod(s) != prod(c.f) {
				t.Errorf("%v -> %v: step %v -> %v is not a proven reshape of the same size", c.f, c.t, from, s)
			}
			if len(steps) == 2 && max(s[2], s[3]) > max(c.f[2], c.f[3], c.t[2], c.t[3]) {
				t.Errorf("%v -> %v: step %v is wider than both ends", c.f, c.t, s)
			}
			from = s
		}
	}
}
