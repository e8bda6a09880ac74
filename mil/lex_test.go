package mil

import "testing"

// TestLexer checks the token kinds, texts and line:col positions of a fragment with every token kind.
func TestLexer(t *testing.T) {
	src := "program(1.3)\n[a = b]{\n  x -> (-0x1.8p-3,+2 -inf); // note\n\t?<>\"s\\\"\" 1e-05 .5 tensor<string, []>}"
	type tk struct {
		kind tokenKind
		text string
		line int
		col  int
	}
	want := []tk{
		{tokIdent, "program", 1, 1}, {tokLParen, "", 1, 8}, {tokNumber, "1.3", 1, 9}, {tokRParen, "", 1, 12},
		{tokLBrack, "", 2, 1}, {tokIdent, "a", 2, 2}, {tokEquals, "", 2, 4}, {tokIdent, "b", 2, 6},
		{tokRBrack, "", 2, 7}, {tokLBrace, "", 2, 8},
		{tokIdent, "x", 3, 3}, {tokArrow, "", 3, 5}, {tokLParen, "", 3, 8}, {tokNumber, "-0x1.8p-3", 3, 9},
		{tokComma, "", 3, 18}, {tokNumber, "+2", 3, 19}, {tokNumber, "-inf", 3, 22}, {tokRParen, "", 3, 26},
		{tokSemi, "", 3, 27},
		{tokQuestion, "", 4, 2}, {tokLAngle, "", 4, 3}, {tokRAngle, "", 4, 4}, {tokString, `s"`, 4, 5},
		{tokNumber, "1e-05", 4, 11}, {tokNumber, ".5", 4, 17}, {tokIdent, "tensor", 4, 20}, {tokLAngle, "", 4, 26},
		{tokIdent, "string", 4, 27}, {tokComma, "", 4, 33}, {tokLBrack, "", 4, 35}, {tokRBrack, "", 4, 36},
		{tokRAngle, "", 4, 37}, {tokRBrace, "", 4, 38}, {tokEOF, "", 4, 39}, {tokEOF, "", 4, 39},
	}
	l := newLexer([]byte(src))
	for i, w := range want {
		got := l.next()
		if got.kind != w.kind || got.text != w.text || got.pos != (Pos{w.line, w.col}) {
			t.Fatalf("token %d: got %v %q at %v, want %v %q at %d:%d", i, got.kind, got.text, got.pos, w.kind, w.text, w.line, w.col)
		}
	}
}

func TestTokenString(t *testing.T) {
	for _, tc := range []struct {
		tok  token
		want string
	}{
		{token{kind: tokEOF}, "end of file"},
		{token{kind: tokIdent, text: "x"}, `identifier "x"`},
		{token{kind: tokNumber, text: "1.5"}, "number 1.5"},
		{token{kind: tokString, text: "a\n"}, `string "a\n"`},
		{token{kind: tokArrow}, `"->"`},
		{token{kind: tokSemi}, `";"`},
		{token{kind: tokError, text: "bad"}, "invalid token"},
	} {
		if got := tc.tok.String(); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.tok.kind, got, tc.want)
		}
	}
}
