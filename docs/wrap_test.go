package docs_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestErrorsWrap keeps a promise of docs/architecture.md: errors.Is and errors.As find a cause (such as
// ane.ErrClosed) through every path, so no fmt.Errorf of the project's code formats an error variable
// (err, or a name ending in Err or err) with %v where %w would wrap it. The check is by name: a
// variable called err holds an error in this code.
func TestErrorsWrap(t *testing.T) {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z%]`)
	errName := regexp.MustCompile(`^(err|[a-z]+Err|[a-z]err)$`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Errorf" || !isIdent(sel.X, "fmt") {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			format, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			var verbs []string
			for _, v := range verb.FindAllString(format, -1) {
				if v != "%%" {
					verbs = append(verbs, v)
				}
			}
			for i, a := range call.Args[1:] {
				if id, ok := a.(*ast.Ident); ok && errName.MatchString(id.Name) && i < len(verbs) && verbs[i] == "%v" {
					t.Errorf("%s: fmt.Errorf formats the error %s with %%v: wrap it with %%w", fset.Position(call.Pos()), id.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
