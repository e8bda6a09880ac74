package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

func TestParamErrors(t *testing.T) {
	src := []byte("P = params(dim = 768, lr = 0.1, name = \"x\", on = True)\n")
	for _, c := range []struct {
		set  map[string]string
		want string // error substring; "" for success
	}{
		{map[string]string{"dmi": "3"}, "params: unknown parameter dmi (the script's parameters: dim, lr, name, on)"},
		{map[string]string{"dim": "1.5"}, "--set dim=1.5: dim is an int (default 768), got a float"},
		{map[string]string{"dim": "abc"}, "--set dim=abc: not a Starlark value (dim is an int, default 768)"},
		{map[string]string{"on": "1"}, "--set on=1: on is a bool (default True), got an int"},
		{map[string]string{"on": "False", "lr": "2", "name": "12", "dim": "-4"}, ""},
	} {
		_, _, err := runStar(t, Config{Script: "p.star", Source: src, Params: c.set})
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.set, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.set, err, c.want)
		}
	}
	_, _, err := runStar(t, Config{Script: "p.star", Source: []byte("x = 1\n"), Params: map[string]string{"a": "1"}})
	if err == nil || !strings.Contains(err.Error(), "parameters were set (a) but the script declares none") {
		t.Errorf("no params(): err = %v", err)
	}
	_, _, err = runStar(t, Config{Script: "p.star", Source: []byte("params(1)\n")})
	if err == nil || !strings.Contains(err.Error(), "params: declare parameters as keyword arguments") {
		t.Errorf("positional: err = %v", err)
	}
}

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		text string
		def  starlark.Value
		want string
	}{
		{"adam", starlark.String("sgd"), `"adam"`},
		{`"adam"`, starlark.String("sgd"), `"adam"`},
		{"123", starlark.String("sgd"), `"123"`},
		{"3", starlark.Float(0.5), "3.0"},
		{"-2e-3", starlark.Float(0.5), "-0.002"},
		{"[1, 2]", starlark.NewList(nil), "[1, 2]"},
		{"word", starlark.None, `"word"`},
		{"7", starlark.None, "7"},
	} {
		v, err := ParseValue(nil, "k", c.text, c.def)
		if err != nil || v.String() != c.want {
			t.Errorf("ParseValue(%q, %v) = %v, %v; want %s", c.text, c.def, v, err, c.want)
		}
	}
	if _, err := ParseSet([]string{"a=1", "b"}); err == nil || !strings.Contains(err.Error(), `--set "b": want KEY=VALUE`) {
		t.Errorf("ParseSet: %v", err)
	}
	m, err := ParseSet([]string{"a=1", "s=x=y", "a=2"})
	if err != nil || m["a"] != "2" || m["s"] != "x=y" {
		t.Errorf("ParseSet = %v, %v", m, err)
	}
}

func TestScriptParams(t *testing.T) {
	src := "load('x.star', 'y')\nN = 4\nP = params(\n    dim = 768,  # model width\n    lr = 3e-4,\n    heads = N * 2,  # depends on a global\n    name = \"é\" + \"b\",\n)\nfail('not run')\n"
	ps, err := ScriptParams("s.star", src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		def := "?"
		if p.Default != nil {
			def = p.Default.String()
		}
		got = append(got, p.Name+"|"+p.Text+"|"+def+"|"+p.Doc)
	}
	want := []string{"dim|768|768|model width", "lr|3e-4|0.0003|", "heads|N * 2|?|depends on a global", `name|"é" + "b"|"éb"|`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ScriptParams:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if ps, err := ScriptParams("s.star", "x = 1\n"); err != nil || ps != nil {
		t.Errorf("no params: %v, %v", ps, err)
	}
	if _, err := ScriptParams("s.star", "x = (\n"); err == nil {
		t.Errorf("syntax error not reported")
	}
}

// TestScriptParamsShared checks that **NAME in params() lists the parameters of a dict(...) the script
// defines or loads from a library, in order and with their comments, and that an unreadable NAME gives
// no parameters rather than a wrong list.
func TestScriptParamsShared(t *testing.T) {
	dir := t.TempDir()
	lib := "COMMON = dict(\n    dim = 64,  # model width\n    lr = 1e-3,  # learning rate\n)\n"
	if err := os.MkdirAll(filepath.Join(dir, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lib", "common.star"), []byte(lib), 0o644); err != nil {
		t.Fatal(err)
	}
	names := func(ps []Param) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.Name+"="+p.Text+"|"+p.Doc)
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct{ src, want string }{
		{"load('lib/common.star', 'COMMON')\nP = params(steps = 5, **COMMON)  # x\n", "steps=5| dim=64|model width lr=1e-3|learning rate"},
		{"load('lib/common.star', C = 'COMMON')\nP = params(seed = 1, **C)\n", "seed=1| dim=64|model width lr=1e-3|learning rate"},
		{"MINE = dict(\n    a = 1,  # the a\n)\nP = params(**MINE)\n", "a=1|the a"},
		{"load('lib/common.star', 'OTHER')\nP = params(steps = 5, **OTHER)\n", ""},
		{"load('lib/missing.star', 'COMMON')\nP = params(**COMMON)\n", ""},
		{"D = {'a': 1}\nP = params(**D)\n", ""},
	} {
		ps, err := ScriptParams(filepath.Join(dir, "s.star"), tc.src)
		if err != nil {
			t.Fatalf("%q: %v", tc.src, err)
		}
		if got := names(ps); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.src, got, tc.want)
		}
	}
}
