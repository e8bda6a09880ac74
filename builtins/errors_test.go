package builtins

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/mil"
	"github.com/anestar/anestar/tokenizer"
	"go.starlark.net/starlark"
)

// TestErrorTypesSurvive checks that the typed errors of the packages beneath the builtins reach the
// caller of Run through the Starlark error: errors.As finds them, and the builtin's error names it.
func TestErrorTypesSurvive(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.safetensors")
	if err := os.WriteFile(bad, []byte("\x08\x00\x00\x00\x00\x00\x00\x00{\"a\":1}!"), 0o644); err != nil {
		t.Fatal(err)
	}
	kernel := `
p = mil.program()
p.output(p.relu(name = "y", x = p.input("x", "fp16", [1, 2, 1, 32])))
k = ane.compile(p)
`
	for _, tc := range []struct {
		name, src, builtin string
		is                 func(error) bool
	}{
		{"mil.ErrorList", `mil.parse("program(1.3)\n{ func main<ios18>(tensor<fp16, [1, 32, 1, 32]> x) { } -> (y); }")`, "mil.parse",
			func(err error) bool { var el mil.ErrorList; return errors.As(err, &el) && len(el) > 0 }},
		{"ckpt.FormatError", `ckpt.read(` + starlark.String(bad).String() + `)`, "ckpt.read",
			func(err error) bool { var fe *ckpt.FormatError; return errors.As(err, &fe) }},
		{"tokenizer.FormatError", `tokenizer.read(` + starlark.String(bad).String() + `)`, "tokenizer.read",
			func(err error) bool { var fe *tokenizer.FormatError; return errors.As(err, &fe) }},
		{"ane.ErrClosed", kernel + "k.close()\nk.eval()\n", "kernel.eval",
			func(err error) bool { return errors.Is(err, ane.ErrClosed) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runStar(t, Config{Script: "errors.star", Source: []byte(tc.src)})
			if err == nil {
				t.Fatal("no error")
			}
			if !tc.is(err) {
				t.Fatalf("errors.As/Is does not find %s in %T: %v", tc.name, err, err)
			}
			var be *BuiltinError
			if !errors.As(err, &be) || be.Name != tc.builtin {
				t.Fatalf("no BuiltinError of %s in %v", tc.builtin, err)
			}
			if !strings.HasPrefix(be.Error(), tc.builtin+": ") || strings.HasPrefix(be.Err.Error(), tc.builtin+": ") {
				t.Errorf("message %q: want the name once, before the cause", be.Error())
			}
		})
	}
}
