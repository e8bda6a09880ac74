package builtins_test

import (
	"context"
	"fmt"
	"os"

	"github.com/anestar/anestar/builtins"
	"go.starlark.net/starlark"
)

// Run a script from Go with its own parameters, output and an extra builtin.
func Example() {
	script := `
P = params(n = 3, scale = 1.0)
t = tensor.ones(P.n).mul_(P.scale)
print("sum:", t.sum(), "answer:", answer())
`
	answer := starlark.NewBuiltin("answer", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.MakeInt(42), nil
	})
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script:   "example.star",
		Source:   []byte(script),
		Params:   map[string]string{"n": "4", "scale": "2.5"},
		Stdout:   os.Stdout,
		Builtins: starlark.StringDict{"answer": answer},
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output: sum: 10.0 answer: 42
}
