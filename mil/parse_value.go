package mil

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// value: TYPE "(" BODY ")", a typed literal such as fp16(0.5), tensor<int32, [2]>([1, 1]),
// tensor<fp16, [4, 4, 1, 1]>(BLOBFILE(...)) or dict<string, string>({{"k", "v"}}).
func (p *parser) value(depth int) *Value {
	if depth > maxDepth {
		p.errorAt(p.tok.pos, "literal nested too deeply")
	}
	pos := p.tok.pos
	t := p.typ(depth)
	if p.tok.kind != tokLParen {
		p.expected(`"(" after the literal's type ` + t.String())
	}
	p.advance()
	var v *Value
	switch {
	case t.Kind == TupleKind && p.tok.kind == tokRParen:
		v = &Value{Type: t} // an empty tuple literal, as in tuple<tuple<string>>()
	case (t.Kind == ScalarKind || t.Kind == TensorKind) && p.tok.kind == tokIdent && p.tok.text == "BLOBFILE":
		v = &Value{Type: t, Blob: p.blob(depth)}
		if t.Kind == TensorKind && len(t.Shape) == 0 {
			v.Type, v.Style = Scalar(t.DType), TensorScalar
		}
	default:
		v = p.bare(t, depth)
	}
	v.Pos = pos
	p.expectPunct(tokRParen, "to close the literal")
	return v
}

// bare parses a literal body whose type t is given by its context: the inside of tensor<...>(...), or a
// member of a tuple, dict or list literal. Scalars are a number, inf, nan, true, false or a string;
// tensors are nested lists "[[1, 2], [3, 4]]" (or one flat list); tuples "(a, b)"; dicts
// "{{k1, v1}, {k2, v2}}"; lists "[a, b]".
func (p *parser) bare(t Type, depth int) *Value {
	if depth > maxDepth {
		p.errorAt(p.tok.pos, "literal nested too deeply")
	}
	v := &Value{Pos: p.tok.pos, Type: t}
	switch t.Kind {
	case ScalarKind:
		p.leaf(t.DType, v)
	case TensorKind:
		if len(t.Shape) == 0 {
			v.Type, v.Style = Scalar(t.DType), TensorScalar
			p.leaf(t.DType, v)
			break
		}
		if p.tok.kind != tokLBrack {
			p.expected(`"[" to open the elements of ` + t.String())
		}
		got := p.nested(t.DType, v, depth)
		v.Type.Shape = p.fitShape(v.Pos, t.Shape, got)
	case TupleKind:
		p.expectPunct(tokLParen, "to open the tuple literal")
		for i, et := range t.Elems {
			if i > 0 && p.tok.kind != tokComma {
				p.expected(fmt.Sprintf(`"," between tuple members; the type %s has %d`, t, len(t.Elems)))
			}
			if i > 0 {
				p.advance()
			}
			v.Elems = append(v.Elems, p.bare(et, depth+1))
		}
		if p.tok.kind != tokRParen {
			p.expected(fmt.Sprintf(`")" to close the tuple literal; the type %s has %d members`, t, len(t.Elems)))
		}
		p.advance()
	case DictKind:
		p.expectPunct(tokLBrace, "to open the dict literal")
		for p.tok.kind != tokRBrace {
			if len(v.Elems) > 0 {
				p.expectPunct(tokComma, `or "}" after a dict entry`)
			}
			p.expectPunct(tokLBrace, "to open a dict entry {key, value}")
			k := p.bare(t.Elems[0], depth+1)
			p.expectPunct(tokComma, "between the key and value of a dict entry")
			val := p.bare(t.Elems[1], depth+1)
			p.expectPunct(tokRBrace, "to close the dict entry {key, value}")
			v.Elems = append(v.Elems, k, val)
		}
		p.advance()
	case ListKind:
		p.expectPunct(tokLBrack, "to open the list literal")
		for p.tok.kind != tokRBrack {
			if len(v.Elems) > 0 {
				p.expectPunct(tokComma, `or "]" after a list member`)
			}
			v.Elems = append(v.Elems, p.bare(t.Elems[0], depth+1))
		}
		p.advance()
		if t.Len >= 0 && len(v.Elems) != t.Len {
			p.errorAt(v.Pos, "list literal has %d members, its type %s says %d", len(v.Elems), t, t.Len)
		}
	}
	return v
}

// nested parses a scalar, or a bracketed list of nested elements, appending the scalars to v. It returns
// the shape of what it read: nil for a scalar, [n, inner...] for a list of n equal-shaped elements.
func (p *parser) nested(d DType, v *Value, depth int) []int {
	if p.tok.kind != tokLBrack {
		p.leaf(d, v)
		return nil
	}
	if depth > maxDepth {
		p.errorAt(p.tok.pos, "literal nested too deeply")
	}
	p.advance()
	var inner []int
	n := 0
	for p.tok.kind != tokRBrack {
		if n > 0 {
			p.expectPunct(tokComma, `or "]" after a tensor element`)
		}
		pos := p.tok.pos
		s := p.nested(d, v, depth+1)
		if n > 0 && !equalInts(s, inner) {
			p.errorAt(pos, "ragged tensor literal: element has shape %s, the first one %s", shapeString(s), shapeString(inner))
		}
		inner = s
		n++
	}
	p.advance()
	return append([]int{n}, inner...)
}

// fitShape checks the shape got of a tensor literal against the declared shape and returns the shape of
// the value: got itself, where it matches (an unknown dim matches any), or the declared shape when got
// is one flat list of the right length.
func (p *parser) fitShape(pos Pos, declared, got []int) []int {
	if len(got) == len(declared) {
		ok := true
		for i, d := range declared {
			ok = ok && (d < 0 || d == got[i])
		}
		if ok {
			return got
		}
	}
	if len(got) == 1 {
		if n, ok := numElements(declared, got[0]); ok && n == got[0] {
			return append([]int{}, declared...)
		}
	}
	p.errorAt(pos, "tensor literal has shape %s, its type says %s", shapeString(got), shapeString(declared))
	return nil
}

// numElements is the product of the dims; ok is false when a dim is unknown or the product exceeds limit.
func numElements(dims []int, limit int) (n int, ok bool) {
	n = 1
	for _, d := range dims {
		if d < 0 {
			return 0, false
		}
		if d == 0 {
			return 0, true
		}
	}
	for _, d := range dims {
		if n > limit/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// shapeString writes dims as MIL does: [1, 2, ?].
func shapeString(dims []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range dims {
		if i > 0 {
			b.WriteString(", ")
		}
		if d < 0 {
			b.WriteByte('?')
		} else {
			b.WriteString(strconv.Itoa(d))
		}
	}
	b.WriteByte(']')
	return b.String()
}

// fp16Overflow is the smallest magnitude that rounds to infinity in fp16 (65504 plus half its last step).
const fp16Overflow = 65520

// leaf parses one scalar of dtype d and appends it to v: a string for string, true or false for bool,
// else a number, inf or nan.
func (p *parser) leaf(d DType, v *Value) {
	t := p.tok
	switch {
	case d == String:
		if t.kind != tokString {
			p.expected("a string")
		}
		v.Strs = append(v.Strs, t.text)
	case d == Bool:
		if t.kind != tokIdent || t.text != "true" && t.text != "false" {
			p.expected("true or false")
		}
		v.Nums = append(v.Nums, b2f(t.text == "true"))
	case t.kind == tokNumber || t.kind == tokIdent && (t.text == "inf" || t.text == "nan"):
		x, err := parseNumber(t.text)
		if err != "" {
			p.errorAt(t.pos, "%s", err)
		}
		if d == FP16 && !math.IsInf(x, 0) && math.Abs(x) >= fp16Overflow {
			p.errorAt(t.pos, "fp16 literal %s is beyond fp16's largest finite value 65504: it would be inf (write inf if that is meant)", t.text)
		}
		v.Nums = append(v.Nums, x)
	default:
		p.expected("a number")
	}
	p.advance()
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// parseNumber converts a number as MIL writes it: a decimal or hex integer, a decimal or hex float
// (0x1.5p-17), inf or nan, each with an optional sign. Integers are read exactly (then rounded to
// float64). It returns a message on failure.
func parseNumber(text string) (float64, string) {
	s, neg := text, false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s, neg = s[1:], s[0] == '-'
	}
	var x float64
	switch {
	case s == "inf":
		x = math.Inf(1)
	case s == "nan":
		x = math.NaN()
	case isHexInt(s):
		u, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return 0, "integer " + text + " out of range"
		}
		x = float64(u)
	default:
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			x = float64(u)
			break
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return 0, "number " + text + " out of range"
			}
			return 0, "malformed number " + text
		}
		x = f
	}
	if neg {
		x = -x
	}
	return x, ""
}

// isHexInt reports whether s is 0x followed by hex digits only (no fraction or exponent).
func isHexInt(s string) bool {
	if len(s) < 3 || s[0] != '0' || s[1] != 'x' && s[1] != 'X' {
		return false
	}
	for _, c := range []byte(s[2:]) {
		if !(isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// blob: "BLOBFILE" "(" "path" "=" STRING-LITERAL "," "offset" "=" INT-LITERAL ")", the two arguments in
// either order; the literals may be spelled string("...") or tensor<string, []>("..."), uint64(64) or
// tensor<uint64, []>(64).
func (p *parser) blob(depth int) *BlobRef {
	p.advance()
	p.expectPunct(tokLParen, `after "BLOBFILE"`)
	b := &BlobRef{}
	var havePath, haveOffset bool
	for i := 0; i < 2; i++ {
		if i > 0 {
			p.expectPunct(tokComma, "between the BLOBFILE arguments")
		}
		key := p.expectIdent(`BLOBFILE argument "path" or "offset"`)
		p.expectPunct(tokEquals, "after the BLOBFILE argument name")
		switch {
		case key.text == "path" && !havePath:
			havePath = true
			v := p.value(depth + 1)
			if v.Type.Kind != ScalarKind || v.Type.DType != String || len(v.Strs) != 1 {
				p.errorAt(v.Pos, `BLOBFILE path must be a string such as string("@model_path/weights/w.bin"), found %s`, v.Type)
			}
			b.Path = v.Strs[0]
		case key.text == "offset" && !haveOffset:
			haveOffset = true
			b.Offset = p.blobOffset(depth)
		case key.text == "path" || key.text == "offset":
			p.errorAt(key.pos, "BLOBFILE %s given twice", key.text)
		default:
			p.errorAt(key.pos, "unknown BLOBFILE argument %q: want path and offset", key.text)
		}
	}
	p.expectPunct(tokRParen, "to close BLOBFILE(path=..., offset=...)")
	return b
}

// blobOffset parses the offset literal of a BLOBFILE exactly, as a uint64.
func (p *parser) blobOffset(depth int) uint64 {
	pos := p.tok.pos
	t := p.typ(depth + 1)
	if t.Kind == TensorKind && len(t.Shape) == 0 {
		t = Scalar(t.DType)
	}
	if t.Kind != ScalarKind || !t.DType.IsInt() {
		p.errorAt(pos, "BLOBFILE offset must be an integer such as uint64(64), found %s", t)
	}
	p.expectPunct(tokLParen, "after the BLOBFILE offset type")
	n := p.tok
	if n.kind != tokNumber {
		p.expected("the BLOBFILE offset, a non-negative integer")
	}
	var u uint64
	var err error
	if isHexInt(n.text) {
		u, err = strconv.ParseUint(n.text[2:], 16, 64)
	} else {
		u, err = strconv.ParseUint(n.text, 10, 64)
	}
	if err != nil {
		p.errorAt(n.pos, "invalid BLOBFILE offset %s: want a non-negative integer below 2^64", n.text)
	}
	p.advance()
	p.expectPunct(tokRParen, "to close the BLOBFILE offset")
	return u
}
