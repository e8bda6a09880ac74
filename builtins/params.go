package builtins

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Param is one parameter a script declares with params().
type Param struct {
	Name    string         // keyword name
	Default starlark.Value // the default value; nil when ScriptParams could not evaluate it
	Text    string         // the default as written in the script
	Doc     string         // the comment after it on its line, without the "#"
	Value   starlark.Value // the value the run used (the default or an override); nil from ScriptParams
}

// paramSet is the parameters declared by a run's params() call.
type paramSet struct {
	list    []Param
	struct_ *starlarkstruct.Struct
}

// paramsBuiltin implements params(**defaults).
func (s *session) paramsBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("params: declare parameters as keyword arguments with defaults, e.g. params(steps = 100)")
	}
	if s.params != nil {
		return nil, fmt.Errorf("params: called twice; declare every parameter in one call")
	}
	ps := &paramSet{}
	declared := map[string]bool{}
	fields := starlark.StringDict{}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		p := Param{Name: name, Default: kv[1], Text: kv[1].String(), Value: kv[1]}
		if text, ok := s.cfg.Params[name]; ok {
			v, err := ParseValue(thread, name, text, kv[1])
			if err != nil {
				return nil, nameErr("params", err)
			}
			p.Value = v
		}
		declared[name] = true
		fields[name] = p.Value
		ps.list = append(ps.list, p)
	}
	var unknown []string
	for k := range s.cfg.Params {
		if !declared[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("params: unknown parameter %s (the script's parameters: %s)", strings.Join(unknown, ", "), ps.names())
	}
	ps.struct_ = starlarkstruct.FromStringDict(starlark.String("params"), fields)
	s.params = ps
	return ps.struct_, nil
}

func (ps *paramSet) names() string {
	var n []string
	for _, p := range ps.list {
		n = append(n, p.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// ParseSet splits "KEY=VALUE" settings, as given to --set, into a map. A key given twice keeps the last value.
func ParseSet(settings []string) (map[string]string, error) {
	m := map[string]string{}
	for _, kv := range settings {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || !syntaxIdent(k) {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE with KEY a parameter name", kv)
		}
		m[k] = v
	}
	return m, nil
}

func syntaxIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ParseValue converts the text of an override for parameter name to a value of the default's type.
//
// The text is a Starlark expression, usually a literal: 512, 3e-4, True, "adam", [1, 2]. When the
// default is a string (or None), text that is not an expression yielding a string is taken as the
// string itself, so --set opt=adam works without quotes. An int is accepted where the default is a
// float; otherwise the value's type must be the default's.
func ParseValue(thread *starlark.Thread, name, text string, def starlark.Value) (starlark.Value, error) {
	if thread == nil {
		thread = new(starlark.Thread)
	}
	v, err := starlark.EvalOptions(FileOptions, thread, "--set "+name, text, nil)
	_, defString := def.(starlark.String)
	if defString || def == starlark.None {
		if _, isString := v.(starlark.String); err != nil || (defString && !isString) {
			return starlark.String(text), nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--set %s=%s: not a Starlark value (%s is %s, default %s)", name, text, name, article(def.Type()), def)
	}
	if def == starlark.None || v.Type() == def.Type() {
		return v, nil
	}
	if _, ok := def.(starlark.Float); ok {
		if i, ok := v.(starlark.Int); ok {
			return starlark.Float(i.Float()), nil
		}
	}
	return nil, fmt.Errorf("--set %s=%s: %s is %s (default %s), got %s", name, text, name, article(def.Type()), def, article(v.Type()))
}

func article(typ string) string {
	switch typ[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + typ
	}
	return "a " + typ
}

// ScriptParams finds the script's params(...) call at top level and returns its parameters without
// running the script: each default is evaluated on its own when it is a constant expression (else only
// its text is given), and the comment after it on its line is its Doc. This is what --help lists.
//
// An argument **NAME, where NAME is a dict(...) of parameters that the script defines at top level or
// load()s from a library file (relative to the script's folder), contributes that dict's entries in
// its order, read the same way from the file that defines it: scripts share parameters so. When such a
// NAME cannot be read, ScriptParams returns no parameters and no error (the run checks them).
func ScriptParams(filename string, src any) ([]Param, error) {
	f, lines, err := parseWithComments(filename, src)
	if err != nil {
		return nil, err
	}
	call := findParamsCall(f.Stmts)
	if call == nil {
		return nil, nil
	}
	return callParams(filename, f, lines, call.Args, 0)
}

// parseWithComments parses a script (src, or the file when src is nil) with its comments and returns
// it with its lines.
func parseWithComments(filename string, src any) (*syntax.File, []string, error) {
	if src == nil {
		b, err := readFile(filename)
		if err != nil {
			return nil, nil, err
		}
		src = b
	}
	f, err := FileOptions.Parse(filename, src, syntax.RetainComments)
	if err != nil {
		return nil, nil, err
	}
	var text string
	switch s := src.(type) {
	case string:
		text = s
	case []byte:
		text = string(s)
	}
	return f, strings.Split(text, "\n"), nil
}

// maxParamsDepth bounds how many files a chain of **NAME arguments may pass through.
const maxParamsDepth = 4

// callParams returns the parameters of the keyword arguments args of a params() or dict() call in f
// (of the file filename, whose lines are given), following **NAME arguments.
func callParams(filename string, f *syntax.File, lines []string, args []syntax.Expr, depth int) ([]Param, error) {
	var out []Param
	for _, a := range args {
		if u, ok := a.(*syntax.UnaryExpr); ok && u.Op == syntax.STARSTAR {
			id, ok := u.X.(*syntax.Ident)
			if !ok || depth >= maxParamsDepth {
				return nil, nil
			}
			ps, err := sharedParams(filename, f, lines, id.Name, depth+1)
			if err != nil || ps == nil {
				return nil, nil
			}
			out = append(out, ps...)
			continue
		}
		kw, ok := a.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ {
			continue
		}
		id, ok := kw.X.(*syntax.Ident)
		if !ok {
			continue
		}
		p := Param{Name: id.Name, Text: spanText(lines, kw.Y)}
		thread := new(starlark.Thread)
		env := starlark.StringDict{"math": starmath.Module}
		if v, err := starlark.EvalExprOptions(FileOptions, thread, kw.Y, env); err == nil {
			p.Default = v
		}
		if c := kw.Comments(); c != nil && len(c.Suffix) > 0 {
			p.Doc = strings.TrimSpace(strings.TrimPrefix(c.Suffix[0].Text, "#"))
		}
		out = append(out, p)
	}
	return out, nil
}

// sharedParams returns the parameters of the dict name that f (with its lines) defines at top level
// (NAME = dict(...)), or that it loads from another file, or nil when there is none.
func sharedParams(filename string, f *syntax.File, lines []string, name string, depth int) ([]Param, error) {
	for _, st := range f.Stmts {
		switch st := st.(type) {
		case *syntax.AssignStmt:
			id, ok := st.LHS.(*syntax.Ident)
			c, isCall := st.RHS.(*syntax.CallExpr)
			if !ok || id.Name != name || !isCall {
				continue
			}
			if fn, ok := c.Fn.(*syntax.Ident); !ok || fn.Name != "dict" {
				return nil, nil
			}
			return callParams(filename, f, lines, c.Args, depth)
		case *syntax.LoadStmt:
			for i, to := range st.To {
				if to.Name != name {
					continue
				}
				path := filepath.Join(filepath.Dir(filename), st.Module.Value.(string))
				lf, llines, err := parseWithComments(path, nil)
				if err != nil {
					return nil, err
				}
				return sharedParams(path, lf, llines, st.From[i].Name, depth)
			}
		}
	}
	return nil, nil
}

// findParamsCall returns the first top-level call to params, as a statement or an assignment's value.
func findParamsCall(stmts []syntax.Stmt) *syntax.CallExpr {
	for _, st := range stmts {
		var e syntax.Expr
		switch st := st.(type) {
		case *syntax.AssignStmt:
			e = st.RHS
		case *syntax.ExprStmt:
			e = st.X
		}
		if c, ok := e.(*syntax.CallExpr); ok {
			if id, ok := c.Fn.(*syntax.Ident); ok && id.Name == "params" {
				return c
			}
		}
	}
	return nil
}

// spanText returns the source text of e; columns are counted in runes.
func spanText(lines []string, e syntax.Expr) string {
	start, end := e.Span()
	if start.Line < 1 || int(end.Line) > len(lines) {
		return ""
	}
	var b strings.Builder
	for l := start.Line; l <= end.Line; l++ {
		r := []rune(lines[l-1])
		from, to := 0, len(r)
		if l == start.Line {
			from = min(int(start.Col)-1, len(r))
		}
		if l == end.Line {
			to = min(int(end.Col)-1, len(r))
		}
		if from < to {
			b.WriteString(string(r[from:to]))
		}
		if l != end.Line {
			b.WriteString("\n")
		}
	}
	return b.String()
}
