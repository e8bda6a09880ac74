package mil

import "strconv"

// maxDim bounds a written dimension; larger ones are certainly mistakes and could overflow element counts.
const maxDim = 1<<31 - 1

// typ: DTYPE | "tensor" "<" DTYPE "," "[" [DIM {"," DIM}] "]" ">" | "tuple" "<" [TYPE {"," TYPE}] ">" |
// "dict" "<" TYPE "," TYPE ">" | "list" "<" TYPE "," (INT | "?") ">", where DIM is an integer or "?".
func (p *parser) typ(depth int) Type {
	if depth > maxDepth {
		p.errorAt(p.tok.pos, "type nested too deeply")
	}
	name := p.expectIdent("a type such as fp16 or tensor<fp16, [1, 2]>")
	switch name.text {
	case "tensor":
		p.expectPunct(tokLAngle, `after "tensor"`)
		t := Type{Kind: TensorKind, DType: p.dtype()}
		p.expectPunct(tokComma, "after the tensor element type")
		p.expectPunct(tokLBrack, "to open the tensor shape")
		t.Shape = []int{}
		for p.tok.kind != tokRBrack {
			if len(t.Shape) > 0 {
				p.expectPunct(tokComma, `or "]" after a dimension`)
			}
			t.Shape = append(t.Shape, p.dim())
		}
		p.advance()
		p.expectPunct(tokRAngle, "to close the tensor type")
		return t
	case "tuple":
		p.expectPunct(tokLAngle, `after "tuple"`)
		t := Type{Kind: TupleKind}
		for p.tok.kind != tokRAngle {
			if len(t.Elems) > 0 {
				p.expectPunct(tokComma, `or ">" after a tuple element type`)
			}
			t.Elems = append(t.Elems, p.typ(depth+1))
		}
		p.advance()
		return t
	case "dict":
		p.expectPunct(tokLAngle, `after "dict"`)
		k := p.typ(depth + 1)
		p.expectPunct(tokComma, "after the dict key type")
		v := p.typ(depth + 1)
		p.expectPunct(tokRAngle, "to close the dict type")
		return Type{Kind: DictKind, Elems: []Type{k, v}}
	case "list":
		p.expectPunct(tokLAngle, `after "list"`)
		t := Type{Kind: ListKind, Elems: []Type{p.typ(depth + 1)}}
		p.expectPunct(tokComma, "after the list element type")
		t.Len = p.dim()
		p.expectPunct(tokRAngle, "to close the list type")
		return t
	}
	d, ok := ParseDType(name.text)
	if !ok {
		p.errorAt(name.pos, "unknown type %q", name.text)
	}
	return Scalar(d)
}

// dtype: an element type name such as fp16.
func (p *parser) dtype() DType {
	t := p.expectIdent("an element type such as fp16")
	d, ok := ParseDType(t.text)
	if !ok {
		p.errorAt(t.pos, "unknown element type %q", t.text)
	}
	return d
}

// dim: a non-negative decimal integer, or "?" (returned as -1) for a dimension not known statically.
func (p *parser) dim() int {
	if p.got(tokQuestion) {
		return -1
	}
	t := p.tok
	if t.kind != tokNumber {
		p.expected(`a dimension (an integer or "?")`)
	}
	n, err := strconv.ParseUint(t.text, 10, 64)
	if err != nil || n > maxDim {
		p.errorAt(t.pos, "invalid dimension %s: want an integer from 0 to %d", t.text, maxDim)
	}
	p.advance()
	return int(n)
}
