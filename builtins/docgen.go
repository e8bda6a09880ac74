package builtins

import (
	"fmt"
	"io"
	"strings"
)

// The generator of docs/builtins.md: the reference page of every builtin, written from the tables
// that define them (go generate ./builtins; TestReference in docgen_test.go fails when the page drifts).

// types lists the Starlark types this package defines, in reference order.
var types = []*typeDef{programType, varType, kernelType, bindingType, surfaceType, tensorType, queueType, optimizerType, scheduleType, metricsType, progressType, tokenizerType, tokenDataType}

// WriteReference writes the Markdown reference of every builtin module, function and type: the page
// docs/builtins.md, generated from the same tables that define the builtins.
func WriteReference(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Builtins reference\n\n")
	b.WriteString("<!-- Generated from package builtins by `go generate ./builtins`; do not edit. -->\n\n")
	b.WriteString("Every script sees these predeclared names. Policy lives in scripts; these are the mechanisms.\n\n")
	b.WriteString(globalsDoc)
	s := &session{cfg: &Config{}}
	mods := s.modules()
	b.WriteString("\n## Modules\n\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "- [`%s`](#%s)\n", m.name, m.name)
	}
	for _, m := range mods {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", m.name, m.doc)
		writeMembers(&b, m.name+".", m.fns)
	}
	b.WriteString("\n## Types\n")
	for _, t := range types {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", t.name, t.doc)
		writeMembers(&b, ".", t.members)
	}
	opsReference(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMembers(b *strings.Builder, prefix string, fns []fnDef) {
	if len(fns) == 0 {
		return
	}
	b.WriteString("| name | description |\n| --- | --- |\n")
	for _, f := range fns {
		fmt.Fprintf(b, "| `%s%s` | %s |\n", prefix, f.sig, strings.ReplaceAll(f.doc, "|", `\|`))
	}
}

// globalsDoc describes the names that are not in a module.
const globalsDoc = "## Globals\n\n" +
	"| name | description |\n| --- | --- |\n" +
	"| `params(**defaults)` | Declares the script's parameters with their defaults, once, and returns a struct of the values to use: " +
	"the defaults, overridden by `--set KEY=VALUE`. An override of an undeclared name is an error that lists the parameters; " +
	"one of another type than its default is an error (an int may stand for a float). VALUE is a Starlark literal; where the " +
	"default is a string, a VALUE that is not a string literal is taken as the string itself (`--set opt=adam`). " +
	"`anestar SCRIPT.star --help` lists the parameters without running the script: it reads the first top-level params() call, " +
	"with the comment after each default as its description, and follows `params(..., **SHARED)` into a `SHARED = dict(...)` that the script " +
	"defines or load()s, so scripts can share parameters. |\n" +
	"| `load(file, *names)` | Loads names from another script, by path relative to the loading file's folder; each file runs once per run, and a cycle is an error. |\n" +
	"| `print(*args)` | Writes a line to the run's output. |\n" +
	"| `sprintf(format, *args)` | printf-style formatting with widths and precisions, which Starlark's `%` lacks: `sprintf(\"%.4f\", loss)`, " +
	"`sprintf(\"%5d\", n)`, `sprintf(\"%-12s\", name)`. Verbs d, f, e, g, s, v, x and `%%`, with flags `-`, `+`, `0` and space, as in C; " +
	"a verb that does not fit its argument, or a count of arguments that does not match the verbs, is an error. Infinities and NaN print as str() does (+inf, -inf, nan). Numbers are rounded " +
	"correctly (to nearest, ties to even on the exact binary value). |\n" +
	"| `struct(**fields)` | An immutable record, as in go.starlark.net's starlarkstruct. |\n" +
	"| `math` | go.starlark.net's math module: sqrt, exp, log, cos, pi, ... |\n" +
	"| `json` | go.starlark.net's json module: encode, decode, indent. |\n\n" +
	"Scripts may use `while` loops, `if`/`for`/`while` at top level, reassignment of globals and `set()`; functions may not " +
	"recurse. A cancelled run (Ctrl-C) stops at the next builtin call or loop step with an error.\n"
