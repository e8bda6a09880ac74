package mil

import (
	"fmt"
	"strconv"
)

// tokenKind says what a token is.
type tokenKind uint8

// The token kinds of MIL text.
const (
	tokEOF      tokenKind = iota // end of input
	tokError                     // a lexical error; text holds the message
	tokIdent                     // identifier or keyword: main, tensor, fp16, BLOBFILE, true
	tokNumber                    // number as written: 1, -0.5, 1e-05, 0x1.5p-17, -inf
	tokString                    // string literal; text holds the unescaped value
	tokLParen                    // (
	tokRParen                    // )
	tokLBrack                    // [
	tokRBrack                    // ]
	tokLBrace                    // {
	tokRBrace                    // }
	tokLAngle                    // <
	tokRAngle                    // >
	tokComma                     // ,
	tokEquals                    // =
	tokSemi                      // ;
	tokQuestion                  // ? (an unknown dimension)
	tokArrow                     // ->
)

var punctNames = [...]string{
	tokLParen: "(", tokRParen: ")", tokLBrack: "[", tokRBrack: "]", tokLBrace: "{", tokRBrace: "}",
	tokLAngle: "<", tokRAngle: ">", tokComma: ",", tokEquals: "=", tokSemi: ";", tokQuestion: "?",
	tokArrow: "->",
}

// token is one lexical element with its position.
type token struct {
	kind tokenKind // what it is
	pos  Pos       // where it starts
	text string    // identifier, number as written, unescaped string, or error message
}

// String describes t for error messages: `"("`, `identifier "x"`, `end of file`.
func (t token) String() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokError:
		return "invalid token"
	case tokIdent:
		return fmt.Sprintf("identifier %q", t.text)
	case tokNumber:
		return "number " + t.text
	case tokString:
		return "string " + quoteString(t.text)
	}
	return strconv.Quote(punctNames[t.kind])
}

// lexer splits MIL text into tokens. Whitespace and // comments separate tokens and are dropped.
type lexer struct {
	src  []byte // the whole input
	off  int    // offset of the next unread byte
	line int    // line of src[off], 1-based
	col  int    // column of src[off], 1-based, in bytes
}

func newLexer(src []byte) *lexer { return &lexer{src: src, line: 1, col: 1} }

// peekByte returns the byte k places after the next unread one, or 0 past the end.
func (l *lexer) peekByte(k int) byte {
	if l.off+k < len(l.src) {
		return l.src[l.off+k]
	}
	return 0
}

// skip consumes n bytes, keeping line and column up to date.
func (l *lexer) skip(n int) {
	for ; n > 0 && l.off < len(l.src); n-- {
		if l.src[l.off] == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
		l.off++
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// isIdentByte reports whether c may continue an identifier; MIL names match [A-Za-z_][A-Za-z0-9_@]*.
func isIdentByte(c byte) bool { return isLetter(c) || isDigit(c) || c == '@' }

// next returns the next token; at the end of input it returns tokEOF forever.
func (l *lexer) next() token {
	l.skipSpace()
	pos := Pos{Line: l.line, Col: l.col}
	if l.off >= len(l.src) {
		return token{kind: tokEOF, pos: pos}
	}
	c := l.src[l.off]
	switch {
	case isLetter(c):
		return token{kind: tokIdent, pos: pos, text: l.word()}
	case isDigit(c), c == '.' && isDigit(l.peekByte(1)):
		return token{kind: tokNumber, pos: pos, text: l.number()}
	case c == '"':
		return l.str(pos)
	case c == '-' && l.peekByte(1) == '>':
		l.skip(2)
		return token{kind: tokArrow, pos: pos}
	case c == '-' || c == '+':
		return l.signed(pos)
	}
	for k, name := range punctNames {
		if len(name) == 1 && name[0] == c {
			l.skip(1)
			return token{kind: tokenKind(k), pos: pos}
		}
	}
	l.skip(1)
	if c < ' ' || c >= 0x7f {
		return token{kind: tokError, pos: pos, text: fmt.Sprintf("unexpected byte 0x%02x", c)}
	}
	return token{kind: tokError, pos: pos, text: fmt.Sprintf("unexpected character %q", c)}
}

// skipSpace consumes white space and // comments.
func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch c := l.src[l.off]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			l.skip(1)
		case c == '/' && l.peekByte(1) == '/':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.skip(1)
			}
		default:
			return
		}
	}
}

// word consumes an identifier.
func (l *lexer) word() string {
	start := l.off
	for l.off < len(l.src) && isIdentByte(l.src[l.off]) {
		l.skip(1)
	}
	return string(l.src[start:l.off])
}

// number consumes the body of a number: digits, letters and dots, and a sign right after an exponent
// letter (e in decimal numbers, p in hex ones). The parser checks the spelling.
func (l *lexer) number() string {
	start := l.off
	hex := l.peekByte(0) == '0' && (l.peekByte(1) == 'x' || l.peekByte(1) == 'X')
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case isDigit(c) || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			l.skip(1)
		case (c == '-' || c == '+') && l.off > start:
			prev := l.src[l.off-1]
			if prev == 'p' || prev == 'P' || !hex && (prev == 'e' || prev == 'E') {
				l.skip(1)
				continue
			}
			return string(l.src[start:l.off])
		default:
			return string(l.src[start:l.off])
		}
	}
	return string(l.src[start:l.off])
}

// signed lexes a number after a leading sign: -0.5, +1, -inf, -nan.
func (l *lexer) signed(pos Pos) token {
	sign := string(l.src[l.off])
	l.skip(1)
	c := l.peekByte(0)
	switch {
	case isDigit(c) || c == '.' && isDigit(l.peekByte(1)):
		return token{kind: tokNumber, pos: pos, text: sign + l.number()}
	case isLetter(c):
		if w := l.word(); w == "inf" || w == "nan" {
			return token{kind: tokNumber, pos: pos, text: sign + w}
		}
	}
	return token{kind: tokError, pos: pos, text: fmt.Sprintf("unexpected %q: a sign must begin a number", sign)}
}

// str lexes a double-quoted string. Escapes: \\ \" \' \n \t \r \xHH.
func (l *lexer) str(pos Pos) token {
	l.skip(1)
	var b []byte
	for {
		if l.off >= len(l.src) || l.src[l.off] == '\n' {
			return token{kind: tokError, pos: pos, text: "string literal not terminated"}
		}
		c := l.src[l.off]
		switch c {
		case '"':
			l.skip(1)
			return token{kind: tokString, pos: pos, text: string(b)}
		case '\\':
			escPos := Pos{Line: l.line, Col: l.col}
			e := l.peekByte(1)
			switch e {
			case '\\', '"', '\'':
				b = append(b, e)
			case 'n':
				b = append(b, '\n')
			case 't':
				b = append(b, '\t')
			case 'r':
				b = append(b, '\r')
			case 'x':
				v, err := strconv.ParseUint(string([]byte{l.peekByte(2), l.peekByte(3)}), 16, 8)
				if err != nil {
					return token{kind: tokError, pos: escPos, text: `\x must be followed by two hex digits`}
				}
				b = append(b, byte(v))
				l.skip(2)
			default:
				return token{kind: tokError, pos: escPos, text: fmt.Sprintf("unknown escape sequence %q in string", `\`+string(rune(e)))}
			}
			l.skip(2)
		default:
			b = append(b, c)
			l.skip(1)
		}
	}
}
