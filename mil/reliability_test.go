package mil

import (
	"strings"
	"testing"
)

// TestCheckRefusesDuplicates: a second func main, an output listed twice and two ops of one name.
func TestCheckRefusesDuplicates(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"two mains", `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> y = relu(x = x)[name = string("y")];
    } -> (y);
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> y = relu(x = x)[name = string("y")];
    } -> (y);
}
`, `6:5: func "main" is defined twice (first at 3:5)`},
		{"output twice", `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> y = relu(x = x)[name = string("y")];
    } -> (y, y);
}
`, `output "y" is listed twice (first at 5:11)`},
		{"name twice", `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> y = relu(x = x)[name = string("same")];
        tensor<fp16, [1, 2, 1, 32]> z = relu(x = y)[name = string("same")];
    } -> (z);
}
`, `5:9: func "main": op name "same" is used twice (first at 4:9)`},
	} {
		p, err := Parse("t.mil", []byte(tc.src))
		if err == nil {
			err = Check(p)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestCheckRefusesHugeShapes: a conv whose padding makes a dim past the parser's limit, and a tensor of
// more than MaxElements, are errors that give the size, not shapes that overflow downstream.
func TestCheckRefusesHugeShapes(t *testing.T) {
	conv := `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [2, 2, 1, 1]> W = const()[name = string("W"), val = tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<int32, [4]> pad = const()[name = string("pad"), val = tensor<int32, [4]>([0, 0, 2147483647, 2147483647])];
        tensor<fp16, [1, 2, 1, 32]> y = conv(x = x, weight = W, pad_type = string("custom"), pad = pad)[name = string("y")];
    } -> (y);
}
`
	p, err := Parse("t.mil", []byte(conv))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(p); err == nil || !strings.Contains(err.Error(), "has a dimension past 2147483647") {
		t.Errorf("conv pad 2^31-1: %v", err)
	}
	big := `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 65536, 1, 65536]> x) {
        tensor<fp16, [1, 65536, 1, 65536]> y = relu(x = x)[name = string("y")];
    } -> (y);
}
`
	if p, err = Parse("t.mil", []byte(big)); err == nil {
		err = Check(p)
	}
	if err == nil || !strings.Contains(err.Error(), "elements") {
		t.Errorf("[1,65536,1,65536]: %v", err)
	}
}
