package mil

import (
	"io"
	"strings"
)

// Print returns the MIL text of p in the dialect of the reference generators:
//
//	program(1.3)
//	[buildInfo = dict<string, string>({{"coremlc-version", "3505.4.1"}})]
//	{
//	    func main<ios18>(tensor<fp16, [1, 768, 1, 512]> x) {
//	        tensor<fp16, [1, 768, 1, 512]> sq = mul(x=x,y=x)[name=string("sq")];
//	    } -> (sq);
//	}
//
// The text is deterministic and Parse reads it back to a program Equal to p. Scalars are written as
// their Style says (fp16(0.5) or tensor<fp16, []>(0.5)); floats as plain decimals (0.00001, as the
// reference prints them) in the shortest form that reads back to the same float64, with inf, -inf and nan
// spelled so. Print does not validate p (see Check); a nil node
// prints as <nil>.
func Print(p *Program) string {
	var pr printer
	pr.program(p)
	return pr.b.String()
}

// Fprint writes the MIL text of p, as Print returns it, to w.
func Fprint(w io.Writer, p *Program) error {
	_, err := io.WriteString(w, Print(p))
	return err
}

// printer accumulates MIL text.
type printer struct {
	b strings.Builder
}

func (pr *printer) str(s ...string) {
	for _, x := range s {
		pr.b.WriteString(x)
	}
}

func (pr *printer) program(p *Program) {
	if p == nil {
		pr.str("<nil>\n")
		return
	}
	pr.str("program(", p.Version, ")\n")
	if len(p.Attrs) > 0 {
		pr.attrs(p.Attrs, " = ")
		pr.str("\n")
	}
	pr.str("{\n")
	for _, f := range p.Funcs {
		pr.function(f)
	}
	pr.str("}\n")
}

func (pr *printer) function(f *Func) {
	if f == nil {
		pr.str("    <nil>\n")
		return
	}
	pr.str("    func ", f.Name)
	if f.Opset != "" {
		pr.str("<", f.Opset, ">")
	}
	pr.str("(")
	for i, in := range f.Inputs {
		if i > 0 {
			pr.str(", ")
		}
		pr.variable(in)
	}
	pr.str(")")
	if len(f.Attrs) > 0 {
		pr.str(" ")
		pr.attrs(f.Attrs, " = ")
	}
	pr.str(" {\n")
	for _, o := range f.Ops {
		pr.op(o)
	}
	pr.str("    } -> (")
	for i, r := range f.Outputs {
		if i > 0 {
			pr.str(", ")
		}
		pr.str(r.Name)
	}
	pr.str(");\n")
}

func (pr *printer) variable(v *Var) {
	if v == nil {
		pr.str("<nil>")
		return
	}
	pr.str(v.Type.String(), " ", v.Name)
}

// op writes "        T a, T b = kind(x=a,y=b)[name=string("a")];".
func (pr *printer) op(o *Op) {
	pr.str("        ")
	if o == nil {
		pr.str("<nil>;\n")
		return
	}
	for i, r := range o.Results {
		if i > 0 {
			pr.str(", ")
		}
		pr.variable(r)
	}
	pr.str(" = ", o.Kind, "(")
	for i, a := range o.Args {
		if i > 0 {
			pr.str(",")
		}
		pr.arg(a)
	}
	pr.str(")")
	if len(o.Attrs) > 0 {
		pr.attrs(o.Attrs, "=")
	}
	pr.str(";\n")
}

func (pr *printer) arg(a *Arg) {
	if a == nil {
		pr.str("<nil>")
		return
	}
	pr.str(a.Name, "=")
	if !a.Tuple && len(a.Operands) == 1 {
		pr.operand(a.Operands[0])
		return
	}
	pr.str("(")
	for i, o := range a.Operands {
		if i > 0 {
			pr.str(",")
		}
		pr.operand(o)
	}
	pr.str(")")
}

func (pr *printer) operand(o Operand) {
	switch {
	case o.Ref != nil:
		pr.str(o.Ref.Name)
	case o.Lit != nil:
		pr.value(o.Lit)
	default:
		pr.str("<nil>")
	}
}

// attrs writes "[a<eq>v, b<eq>w]"; eq is "=" on ops and " = " on programs and functions, as in the
// reference sources.
func (pr *printer) attrs(as []*Attr, eq string) {
	pr.str("[")
	for i, a := range as {
		if i > 0 {
			pr.str(", ")
		}
		if a == nil {
			pr.str("<nil>")
			continue
		}
		pr.str(a.Name, eq)
		pr.value(a.Value)
	}
	pr.str("]")
}
