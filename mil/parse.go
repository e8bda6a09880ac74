package mil

import (
	"fmt"
	"strconv"
)

// SyntaxError is an error in MIL text, found by Parse.
type SyntaxError struct {
	File string // the file name given to Parse
	Pos  Pos    // where the error is
	Msg  string // what was wrong and what was expected
}

// Error returns "FILE:LINE:COL: message".
func (e *SyntaxError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("%d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// maxDepth bounds the nesting of types and literals, so that hostile input cannot exhaust the stack.
const maxDepth = 64

// Parse reads the MIL program in src. filename names the text in error messages, which have the form
// "FILE:LINE:COL: message"; every error is a *SyntaxError.
//
// Parse accepts the dialect of the reference generators (program(1.3), short scalar literals like
// fp16(0.5), name=string("x")) and the one Apple's compiler writes (program(1.0), tensor<string, []>("x")
// scalars, hex floats, inf and nan, spaces around "=", literals as arguments, tuple results, dict and tuple
// literals, function attributes, unknown dims "?"). It only builds the AST; Check validates it.
//
// A scalar literal has a ScalarKind type however it is spelled; Value.Style records whether it was
// written fp16(0.5) or tensor<fp16, []>(0.5). Declared types (function inputs, op results) are kept as
// written, so "tensor<string, []> pt" declares a rank-0 TensorKind. An unknown dim "?" is -1 in Shape.
func Parse(filename string, src []byte) (prog *Program, err error) {
	p := &parser{file: filename, lx: newLexer(src)}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			prog, err = nil, b.err
		}
	}()
	p.advance()
	return p.program(), nil
}

// bailout carries a syntax error up from deep in the parser to Parse.
type bailout struct{ err *SyntaxError }

// parser is a recursive-descent parser with one token of lookahead beyond the current one.
type parser struct {
	file     string // for error messages
	lx       *lexer // token source
	tok      token  // current token
	ahead    token  // the token after tok, when hasAhead
	hasAhead bool   // whether ahead holds a token
}

// advance moves to the next token; a lexical error stops the parse.
func (p *parser) advance() {
	if p.hasAhead {
		p.tok, p.hasAhead = p.ahead, false
	} else {
		p.tok = p.lx.next()
	}
	if p.tok.kind == tokError {
		p.errorAt(p.tok.pos, "%s", p.tok.text)
	}
}

// peek returns the token after the current one.
func (p *parser) peek() token {
	if !p.hasAhead {
		p.ahead, p.hasAhead = p.lx.next(), true
	}
	return p.ahead
}

func (p *parser) errorAt(pos Pos, format string, args ...any) {
	panic(bailout{&SyntaxError{File: p.file, Pos: pos, Msg: fmt.Sprintf(format, args...)}})
}

// expected stops the parse with "expected WHAT, found TOKEN" at the current token.
func (p *parser) expected(what string) {
	p.errorAt(p.tok.pos, "expected %s, found %s", what, p.tok)
}

// expect consumes a token of kind k; what describes it in the error otherwise.
func (p *parser) expect(k tokenKind, what string) token {
	t := p.tok
	if t.kind != k {
		p.expected(what)
	}
	p.advance()
	return t
}

// expectPunct consumes the punctuation k, naming it in the error otherwise.
func (p *parser) expectPunct(k tokenKind, context string) token {
	if p.tok.kind != k {
		p.expected(strconv.Quote(punctNames[k]) + " " + context)
	}
	return p.expect(k, "")
}

// expectIdent consumes an identifier; what describes it in the error otherwise.
func (p *parser) expectIdent(what string) token { return p.expect(tokIdent, what) }

// expectKeyword consumes the identifier kw.
func (p *parser) expectKeyword(kw, context string) token {
	if p.tok.kind != tokIdent || p.tok.text != kw {
		p.expected(fmt.Sprintf("%q %s", kw, context))
	}
	t := p.tok
	p.advance()
	return t
}

// got consumes the current token and reports true if it has kind k.
func (p *parser) got(k tokenKind) bool {
	if p.tok.kind == k {
		p.advance()
		return true
	}
	return false
}

// program: "program" "(" VERSION ")" [attrs] "{" {func} "}".
func (p *parser) program() *Program {
	prog := &Program{Pos: p.expectKeyword("program", "at the start of a MIL program").pos}
	p.expectPunct(tokLParen, `after "program"`)
	prog.Version = p.expect(tokNumber, "program version such as 1.3").text
	p.expectPunct(tokRParen, "after the program version")
	if p.tok.kind == tokLBrack {
		prog.Attrs = p.attrs()
	}
	p.expectPunct(tokLBrace, "to open the program body")
	for p.tok.kind != tokRBrace {
		if p.tok.kind != tokIdent || p.tok.text != "func" {
			p.expected(`"func" or "}" closing the program`)
		}
		prog.Funcs = append(prog.Funcs, p.function())
	}
	p.advance()
	if p.tok.kind != tokEOF {
		p.expected("end of file after the program")
	}
	return prog
}

// function: "func" NAME ["<" OPSET ">"] "(" [TYPE NAME {"," TYPE NAME}] ")" [attrs] "{" {op} "}"
// "->" "(" [NAME {"," NAME}] ")" [";"].
func (p *parser) function() *Func {
	f := &Func{Pos: p.tok.pos}
	p.advance()
	f.Name = p.expectIdent("function name").text
	if p.got(tokLAngle) {
		f.Opset = p.expectIdent("opset name such as ios18").text
		p.expectPunct(tokRAngle, "after the opset")
	}
	p.expectPunct(tokLParen, "to open the function inputs")
	for p.tok.kind != tokRParen {
		if len(f.Inputs) > 0 {
			p.expectPunct(tokComma, `or ")" after a function input`)
		}
		f.Inputs = append(f.Inputs, p.variable("input"))
	}
	p.advance()
	if p.tok.kind == tokLBrack {
		f.Attrs = p.attrs()
	}
	p.expectPunct(tokLBrace, "to open the function body")
	for p.tok.kind != tokRBrace {
		f.Ops = append(f.Ops, p.op())
	}
	p.advance()
	p.expect(tokArrow, `"->" and the function outputs after "}"`)
	p.expectPunct(tokLParen, `to open the function outputs`)
	for p.tok.kind != tokRParen {
		if len(f.Outputs) > 0 {
			p.expectPunct(tokComma, `or ")" after a function output`)
		}
		t := p.expectIdent("output name")
		f.Outputs = append(f.Outputs, Ref{Pos: t.pos, Name: t.text})
	}
	p.advance()
	p.got(tokSemi)
	return f
}

// variable: TYPE NAME, for function inputs and op results.
func (p *parser) variable(what string) *Var {
	t := p.typ(0)
	name := p.expectIdent(what + " name after its type")
	return &Var{Pos: name.pos, Name: name.text, Type: t}
}

// op: RESULTS "=" KIND "(" [arg {"," arg}] ")" [attrs] ";", where RESULTS is "TYPE NAME {, TYPE NAME}"
// or the same in parentheses.
func (p *parser) op() *Op {
	o := &Op{Pos: p.tok.pos}
	if p.tok.kind != tokIdent && p.tok.kind != tokLParen {
		p.expected(`an op ("TYPE NAME = op(...);") or "}" closing the function`)
	}
	paren := p.got(tokLParen)
	for {
		o.Results = append(o.Results, p.variable("result"))
		if !p.got(tokComma) {
			break
		}
	}
	if paren {
		p.expectPunct(tokRParen, `or "," after an op result`)
	}
	p.expectPunct(tokEquals, `or "," after the op result`)
	o.Kind = p.expectIdent("op name").text
	p.expectPunct(tokLParen, "to open the op arguments")
	for p.tok.kind != tokRParen {
		if len(o.Args) > 0 {
			p.expectPunct(tokComma, `or ")" after an op argument`)
		}
		o.Args = append(o.Args, p.arg())
	}
	p.advance()
	if p.tok.kind == tokLBrack {
		o.Attrs = p.attrs()
	}
	p.expectPunct(tokSemi, "at the end of the op")
	return o
}

// arg: NAME "=" operand | NAME "=" "(" [operand {"," operand}] ")".
func (p *parser) arg() *Arg {
	name := p.expectIdent("argument name")
	a := &Arg{Pos: name.pos, Name: name.text}
	p.expectPunct(tokEquals, "after the argument name")
	if !p.got(tokLParen) {
		a.Operands = []Operand{p.operand()}
		return a
	}
	a.Tuple = true
	for p.tok.kind != tokRParen {
		if len(a.Operands) > 0 {
			p.expectPunct(tokComma, `or ")" in the argument tuple`)
		}
		a.Operands = append(a.Operands, p.operand())
	}
	p.advance()
	return a
}

// operand: a name, or a typed literal such as fp16(1.0) or tensor<int32, [2]>([1, 1]).
func (p *parser) operand() Operand {
	if p.tok.kind == tokIdent && !p.startsValue() {
		r := &Ref{Pos: p.tok.pos, Name: p.tok.text}
		p.advance()
		return Operand{Ref: r}
	}
	if p.tok.kind != tokIdent {
		p.expected("a value name or a typed literal such as fp16(1.0)")
	}
	return Operand{Lit: p.value(0)}
}

// startsValue reports whether the current identifier begins a typed literal rather than naming a value.
func (p *parser) startsValue() bool {
	switch next := p.peek().kind; p.tok.text {
	case "tensor", "tuple", "dict", "list":
		return next == tokLAngle
	default:
		_, ok := ParseDType(p.tok.text)
		return ok && next == tokLParen
	}
}

// attrs: "[" [NAME "=" value {"," NAME "=" value}] "]".
func (p *parser) attrs() []*Attr {
	p.advance()
	var as []*Attr
	for p.tok.kind != tokRBrack {
		if len(as) > 0 {
			p.expectPunct(tokComma, `or "]" after an attribute`)
		}
		name := p.expectIdent("attribute name")
		p.expectPunct(tokEquals, "after the attribute name")
		as = append(as, &Attr{Pos: name.pos, Name: name.text, Value: p.value(0)})
	}
	p.advance()
	return as
}
