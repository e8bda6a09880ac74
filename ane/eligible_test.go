package ane

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// eligibleSrc is a program the ANE is known to run: one fp16 input and output 32 wide, a conv.
const eligibleSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [2, 2, 1, 1]> w = const()[name=string("w"), val=tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<fp16, [1, 2, 1, 32]> y = conv(weight=w, x=x)[name=string("y")];
    } -> (y);
}
`

func parse(t *testing.T, src string) *mil.Program {
	t.Helper()
	p, err := mil.Parse("t.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := mil.Check(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEligibleProven(t *testing.T) {
	v := Eligible(parse(t, eligibleSrc))
	if v.Support() != Proven || v.Err() != nil {
		t.Fatalf("verdict %v: %v", v.Support(), v.Findings)
	}
	// One finding per input, output and op, then the program's three.
	var whats []string
	for _, f := range v.Findings {
		whats = append(whats, f.What)
		if f.Reason != "" || f.Fix != "" {
			t.Errorf("proven finding with a reason: %+v", f)
		}
	}
	want := []string{"input `x`", "output `y`", "op `w` (const)", "op `y` (conv)", "program", "program", "program"}
	if !slices.Equal(whats, want) {
		t.Errorf("findings %q, want %q", whats, want)
	}
	if ops := v.Ops(); !slices.Equal(ops, []string{"const", "conv"}) {
		t.Errorf("ops %q", ops)
	}
	if s := v.Findings[0].String(); s != "input `x` (3:50): proven" {
		t.Errorf("String of a proven finding: %q", s)
	}
}

// TestEligibleWarnings checks what is unknown on hardware: a warning, never a refusal.
func TestEligibleWarnings(t *testing.T) {
	for _, c := range []struct {
		name, from, to, rule, want string
	}{
		{"unknown op", `} -> (y);`, `tensor<fp16, [1, 2, 1, 32]> z = maximum(x=y, y=x)[name=string("z")];
    } -> (z);`, RuleOp, "op `z` (maximum) (6:5) is not known to run on the ANE: no reference source ran maximum"},
		{"two outputs", `} -> (y);`, `tensor<fp16, [1, 2, 1, 32]> z = relu(x=y)[name=string("z")];
    } -> (y, z);`, RuleSingleIO, "program (3:5) has 2 outputs: every reference kernel has one; concatenate the results on channels into one output"},
		{"two inputs", `tensor<fp16, [1, 2, 1, 32]> x)`, `tensor<fp16, [1, 2, 1, 32]> x, tensor<fp16, [1, 2, 1, 32]> u)`, RuleSingleIO,
			"has 2 inputs: every reference kernel has one, and several are not known to bind (maderix saw error 0x1d)"},
		{"dead but wide", `} -> (y);`, `tensor<fp16, [1, 2, 1, 32]> z = relu(x=y)[name=string("z")];
    } -> (y);`, RuleDeadCode, "op `z` (relu) (6:5) is dead (no output depends on it): the ANE refuses dead code that reduces to width 1"},
		{"opset", `main<ios18>`, `main<ios17>`, RuleOpset, "is program(1.3) with func main<ios17>: the references compile program(1.3) with ios18"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Eligible(parse(t, strings.Replace(eligibleSrc, c.from, c.to, 1)))
			if v.Support() != Unknown || v.Err() != nil {
				t.Fatalf("verdict %v: %v", v.Support(), v.Findings)
			}
			u := v.With(Unknown)
			if len(u) != 1 || u[0].Rule != c.rule || !strings.Contains(u[0].String(), c.want) {
				t.Errorf("unknown findings %v, want one of rule %s containing %q", u, c.rule, c.want)
			}
		})
	}
}

// TestEligibleStaticShapes checks the rule mil.Check cannot let through from text: a dynamic dim.
func TestEligibleStaticShapes(t *testing.T) {
	p := parse(t, eligibleSrc)
	p.Funcs[0].Inputs[0].Type = mil.Tensor(mil.FP16, 1, 2, 1, -1)
	v := Eligible(p)
	r := v.With(Refused)
	if len(r) != 1 || r[0].Rule != RuleStatic || !strings.Contains(r[0].String(), "has a dynamic dim") {
		t.Errorf("refusals %v", r)
	}
}

// TestEligibleMalformed checks that a program mil.Check would reject gives findings, not a panic.
func TestEligibleMalformed(t *testing.T) {
	for _, p := range []*mil.Program{
		nil,
		{},
		{Funcs: []*mil.Func{nil, {Name: "main", Ops: []*mil.Op{nil, {Kind: "conv", Args: []*mil.Arg{nil, {Name: "weight"}}}}, Outputs: []mil.Ref{{Name: "nope"}}}}},
	} {
		v := Eligible(p)
		if v.Support() != Refused {
			t.Errorf("%v: verdict %v", p, v.Support())
		}
		var ie *IneligibleError
		if !errors.As(v.Err(), &ie) {
			t.Errorf("Err %v", v.Err())
		}
	}
}

// TestRulesData checks the tables: every rule and op cites a source, every finding names a rule of
// the table, and the refused ops say what the hardware does.
func TestRulesData(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if r.ID == "" || r.Need == "" || r.Otherwise == "" || !strings.Contains(r.Source, "/") || seen[r.ID] {
			t.Errorf("rule %+v", r)
		}
		seen[r.ID] = true
	}
	for kind, s := range HardwareOps {
		if !strings.Contains(s.Source, "/") || (s.Support == Refused) != (s.Note != "") || s.Support == Unknown {
			t.Errorf("op %s: %+v", kind, s)
		}
		if s.Support == Proven {
			if _, ok := mil.LookupOp(kind); !ok && kind != "const" {
				t.Errorf("proven op %s is not in the op table", kind)
			}
		}
	}
	v := Eligible(parse(t, strings.Replace(eligibleSrc, "[1, 2, 1, 32]> x)", "[1, 2, 1, 32]> x, fp16 s)", 1)))
	for _, f := range v.Findings {
		if _, ok := RuleByID(f.Rule); !ok {
			t.Errorf("finding %v names no rule", f)
		}
	}
}
