package mil

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// value writes a typed literal: fp16(0.5), tensor<fp16, []>(0.5), tensor<int32, [2]>([1,1]),
// tensor<fp16, [2, 2]>(BLOBFILE(path=string("..."), offset=uint64(64))), dict<K, V>({{k, v}}).
func (pr *printer) value(v *Value) {
	if v == nil {
		pr.str("<nil>")
		return
	}
	t := v.Type
	if t.Kind == ScalarKind && v.Style == TensorScalar {
		t = Tensor(t.DType)
	}
	pr.str(t.String(), "(")
	switch {
	case v.Blob != nil && (t.Kind == ScalarKind || t.Kind == TensorKind):
		pr.str(`BLOBFILE(path=string(`, quoteString(v.Blob.Path), `), offset=uint64(`,
			strconv.FormatUint(v.Blob.Offset, 10), `))`)
	case t.Kind == TupleKind && len(v.Elems) == 0:
	default:
		pr.bare(v)
	}
	pr.str(")")
}

// bare writes a literal without its type, as inside tensor<...>(...) or as a member of a tuple, dict or
// list literal.
func (pr *printer) bare(v *Value) {
	if v == nil {
		pr.str("<nil>")
		return
	}
	switch t := v.Type; t.Kind {
	case ScalarKind:
		pr.leaf(v, 0)
	case TensorKind:
		if len(t.Shape) == 0 {
			pr.leaf(v, 0)
			return
		}
		n := len(v.Nums)
		if t.DType == String {
			n = len(v.Strs)
		}
		shape := t.Shape
		if c, ok := numElements(shape, n); !ok || c != n || n == 0 {
			// An empty tensor prints as [] whatever its shape (a shape like [2147483647, 0] would
			// otherwise print as that many []s), and an inconsistent one as the elements there are.
			shape = []int{n}
		}
		next := 0
		pr.data(v, shape, &next)
	case TupleKind:
		pr.str("(")
		pr.members(v.Elems)
		pr.str(")")
	case DictKind:
		pr.str("{")
		for i := 0; i < len(v.Elems); i += 2 {
			if i > 0 {
				pr.str(", ")
			}
			pr.str("{")
			pr.members(v.Elems[i:min(i+2, len(v.Elems))])
			pr.str("}")
		}
		pr.str("}")
	case ListKind:
		pr.str("[")
		pr.members(v.Elems)
		pr.str("]")
	}
}

func (pr *printer) members(vs []*Value) {
	for i, e := range vs {
		if i > 0 {
			pr.str(", ")
		}
		pr.bare(e)
	}
}

// data writes tensor elements nested by shape, as in [[1,2],[3,4]], starting at element *next.
func (pr *printer) data(v *Value, shape []int, next *int) {
	if len(shape) == 0 {
		pr.leaf(v, *next)
		*next++
		return
	}
	pr.str("[")
	for i := 0; i < shape[0]; i++ {
		if i > 0 {
			pr.str(",")
		}
		pr.data(v, shape[1:], next)
	}
	pr.str("]")
}

// leaf writes element i of v in the spelling of its dtype.
func (pr *printer) leaf(v *Value, i int) {
	switch d := v.Type.DType; {
	case d == String:
		if i < len(v.Strs) {
			pr.str(quoteString(v.Strs[i]))
			return
		}
	case i < len(v.Nums) && d == Bool:
		pr.str(strconv.FormatBool(v.Nums[i] != 0))
		return
	case i < len(v.Nums):
		pr.str(formatNumber(v.Nums[i], d))
		return
	}
	pr.str("<missing>")
}

// formatNumber writes x as an element of dtype d: whole numbers of integer dtypes as exact integers
// (64, -1), everything else as formatFloat does.
func formatNumber(x float64, d DType) string {
	if d.IsInt() && x == math.Trunc(x) {
		switch {
		case x == 0 && math.Signbit(x):
			return "-0"
		case math.Abs(x) < 1<<63:
			return strconv.FormatInt(int64(x), 10)
		case x > 0 && x < 1<<64:
			return strconv.FormatUint(uint64(x), 10)
		}
	}
	return formatFloat(x)
}

// formatFloat writes x in the shortest form that parses back to exactly x, as a plain decimal the way
// the reference generators print floats (1.0, 0.125, 65504.0, 0.00001), and inf, -inf, nan. Magnitudes
// outside [1e-30, 1e30], which no fp16 and no ordinary fp32 value reaches, keep an exponent (1e-45) so
// that the text stays short.
func formatFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	format := byte('f')
	if a := math.Abs(x); a != 0 && (a < 1e-30 || a > 1e30) {
		format = 'g'
	}
	s := strconv.FormatFloat(x, format, -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// quoteString writes s as a MIL string literal: in double quotes, with \\ \" \n \t \r escaped and any other
// control byte or byte that is not valid UTF-8 as \xHH.
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if c >= 0x80 {
				r, size := utf8.DecodeRuneInString(s[i:])
				if r != utf8.RuneError || size > 1 {
					b.WriteString(s[i : i+size])
					i += size
					continue
				}
			}
			if c < ' ' || c >= 0x7f {
				const hex = "0123456789abcdef"
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
		}
		i++
	}
	b.WriteByte('"')
	return b.String()
}
