package mil

import (
	"errors"
	"strings"
	"testing"
)

// wrap puts one op line into a program whose op lines start on line 3.
func wrap(op string) string {
	return "program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 4, 1, 2]> x) {\n" + op + "\n    } -> (x);\n}\n"
}

// TestParseErrors checks the position and the message of each kind of syntax error.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		src  string
		want string
	}{
		{"", `t.mil:1:1: expected "program" at the start of a MIL program, found end of file`},
		{"programme(1.3)", `t.mil:1:1: expected "program" at the start of a MIL program, found identifier "programme"`},
		{"program 1.3", `t.mil:1:9: expected "(" after "program", found number 1.3`},
		{"program(ios18)", `t.mil:1:9: expected program version such as 1.3, found identifier "ios18"`},
		{"program(1.3)\n[buildInfo = dict<string, string>({{\"a\", \"b\"})]", `t.mil:2:46: expected "," or "}" after a dict entry, found ")"`},
		{"program(1.3)\n{\n  fun main() {} -> (x);\n}", `t.mil:3:3: expected "func" or "}" closing the program, found identifier "fun"`},
		{"program(1.3) { func main<ios18>(tensor<fp16, [1]> x) { } -> (x); } junk", `t.mil:1:68: expected end of file after the program, found identifier "junk"`},
		{"program(1.3) { func main<ios18(tensor<fp16, [1]> x) { } -> (x); }", `t.mil:1:31: expected ">" after the opset, found "("`},
		{"program(1.3) { func main(tensor<fp16, [1]> x y) { } -> (x); }", `t.mil:1:46: expected "," or ")" after a function input, found identifier "y"`},
		{"program(1.3) { func main(tensor<fp16, [1]> x) { } (x); }", `t.mil:1:51: expected "->" and the function outputs after "}", found "("`},
		{"program(1.3) { func main(tensor<fp16, [1]> x) {\n", `t.mil:2:1: expected an op ("TYPE NAME = op(...);") or "}" closing the function, found end of file`},
		{wrap(`        tensor<fp17, [1]> y = relu(x=x)[name=string("y")];`), `t.mil:4:16: unknown element type "fp17"`},
		{wrap(`        tensr<fp16, [1]> y = relu(x=x);`), `t.mil:4:9: unknown type "tensr"`},
		{wrap(`        tensor<fp16, [1, -2]> y = relu(x=x);`), `t.mil:4:26: invalid dimension -2: want an integer from 0 to 2147483647`},
		{wrap(`        tensor<fp16, [1, 99999999999]> y = relu(x=x);`), `t.mil:4:26: invalid dimension 99999999999: want an integer from 0 to 2147483647`},
		{wrap(`        tensor<fp16, [1 2]> y = relu(x=x);`), `t.mil:4:25: expected "," or "]" after a dimension, found number 2`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> y relu(x=x);`), `t.mil:4:38: expected "=" or "," after the op result, found identifier "relu"`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> = relu(x=x);`), `t.mil:4:36: expected result name after its type, found "="`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> y = relu(x=x)`), `t.mil:5:5: expected ";" at the end of the op, found "}"`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> y = relu(x x);`), `t.mil:4:47: expected "=" after the argument name, found identifier "x"`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> y = add(x=x, y=1.0);`), `t.mil:4:51: expected a value name or a typed literal such as fp16(1.0), found number 1.0`},
		{wrap(`        tensor<fp16, [1, 4, 1, 2]> y = add(x=x, y=fp16("a"));`), `t.mil:4:56: expected a number, found string "a"`},
		{wrap(`        bool y = const()[val=bool(1)];`), `t.mil:4:35: expected true or false, found number 1`},
		{wrap(`        string y = const()[val=string(valid)];`), `t.mil:4:39: expected a string, found identifier "valid"`},
		{wrap(`        fp32 y = const()[val=fp32(1e999)];`), `t.mil:4:35: number 1e999 out of range`},
		{wrap(`        fp32 y = const()[val=fp32(1.2.3)];`), `t.mil:4:35: malformed number 1.2.3`},
		{wrap(`        fp32 y = const()[val=fp32(-x)];`), `t.mil:4:35: unexpected "-": a sign must begin a number`},
		{wrap(`        string y = const()[val=string("abc)];`), `t.mil:4:39: string literal not terminated`},
		{wrap(`        string y = const()[val=string("a\qc")];`), `t.mil:4:41: unknown escape sequence "\\q" in string`},
		{wrap(`        string y = const()[val=string("a\x4")];`), `t.mil:4:41: \x must be followed by two hex digits`},
		{wrap(`        fp16 y = const()[val=fp16(1.0)] $;`), `t.mil:4:41: unexpected character '$'`},
		{wrap("        fp16 y = const()[val=fp16(1.0)] \x01;"), `t.mil:4:41: unexpected byte 0x01`},
		{wrap(`        tensor<int32, [2, 2]> y = const()[val=tensor<int32, [2, 2]>([[1, 2], [3]])];`), `t.mil:4:78: ragged tensor literal: element has shape [1], the first one [2]`},
		{wrap(`        tensor<int32, [2, 2]> y = const()[val=tensor<int32, [2, 2]>([1, 2, 3])];`), `t.mil:4:69: tensor literal has shape [3], its type says [2, 2]`},
		{wrap(`        tensor<int32, [2]> y = const()[val=tensor<int32, [2]>(1)];`), `t.mil:4:63: expected "[" to open the elements of tensor<int32, [2]>, found number 1`},
		{wrap(`        tensor<int32, [2]> y = const()[val=tensor<int32, [2]>([1, 2,])];`), `t.mil:4:69: expected a number, found "]"`},
		{wrap(`        list<int32, 3> y = const()[val=list<int32, 3>([1, 2])];`), `t.mil:4:55: list literal has 2 members, its type list<int32, 3> says 3`},
		{wrap(`        tuple<int32, fp16> y = const()[val=tuple<int32, fp16>((1))];`), `t.mil:4:65: expected "," between tuple members; the type tuple<int32, fp16> has 2, found ")"`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(path=string("w.bin")))];`), `t.mil:4:90: expected "," between the BLOBFILE arguments, found ")"`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(path=string("a"), path=string("b")))];`), `t.mil:4:88: BLOBFILE path given twice`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(file=string("a"), offset=uint64(64)))];`), `t.mil:4:70: unknown BLOBFILE argument "file": want path and offset`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(path=int32(1), offset=uint64(64)))];`), `t.mil:4:75: BLOBFILE path must be a string such as string("@model_path/weights/w.bin"), found int32`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(path=string("a"), offset=fp32(64)))];`), `t.mil:4:95: BLOBFILE offset must be an integer such as uint64(64), found fp32`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=tensor<fp16, [4]>(BLOBFILE(path=string("a"), offset=uint64(-64)))];`), `t.mil:4:102: invalid BLOBFILE offset -64: want a non-negative integer below 2^64`},
		{wrap(`        tensor<fp16, [4]> w = const()[val=dict<string, string>({{"a", "b"}, {"c"}})];`), `t.mil:4:81: expected "," between the key and value of a dict entry, found "}"`},
		{wrap(`        fp16 y = const()[val=fp16(1.0];`), `t.mil:4:38: expected ")" to close the literal, found "]"`},
		{wrap(`        fp16 y = const()[val fp16(1.0)];`), `t.mil:4:30: expected "=" after the attribute name, found identifier "fp16"`},
		{wrap(`        fp16 y = const()[val=fp16(1.0) name=string("y")];`), `t.mil:4:40: expected "," or "]" after an attribute, found identifier "name"`},
		{wrap(`        fp16 y = const()[val=fp16(1.0)];` + "\n" + `        fp16 z = add(x=y,y=(y,);`), `t.mil:5:31: expected a value name or a typed literal such as fp16(1.0), found ")"`},
		{wrap(`        tensor<fp16, [1]> y = const()[val=tensor<fp16, [1]>(` + strings.Repeat("[", 100) + `1` + strings.Repeat("]", 100) + `)];`), `t.mil:4:126: literal nested too deeply`},
		{wrap(`        ` + strings.Repeat("tuple<", 100) + `fp16` + strings.Repeat(">", 100) + ` y = const();`), `t.mil:4:399: type nested too deeply`},
	}
	for _, tc := range tests {
		p, err := Parse("t.mil", []byte(tc.src))
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %q", tc.src, tc.want)
			continue
		}
		if p != nil {
			t.Errorf("Parse(%q) returned a program with its error", tc.src)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.File != "t.mil" || !se.Pos.IsValid() {
			t.Errorf("Parse(%q): error %#v is not a *SyntaxError with a position", tc.src, err)
		}
		if err.Error() != tc.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", tc.src, err, tc.want)
		}
	}
}

func TestSyntaxErrorWithoutFile(t *testing.T) {
	_, err := Parse("", []byte("program("))
	if want := `1:9: expected program version such as 1.3, found end of file`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}
