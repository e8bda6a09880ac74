package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/metrics"
	"github.com/spf13/pflag"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

func init() {
	register(command{
		name:    "run",
		args:    "SCRIPT.star [flags] [args]",
		summary: "run a training script (also: anestar SCRIPT.star)",
		run:     runScript,
	})
}

// runOptions are the flags of `anestar run`.
type runOptions struct {
	scriptFlags
	settings   ane.Settings // --fp32, --check-numerics, --relaxed
	cpuprofile string
	opProfile  string
}

func runFlags(o *runOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	o.add(fs, "where kernels run: auto, ane or emulator",
		"continue from the script's checkpoint (process.resume)",
		"discard print and progress output (errors still show)")
	addSettingFlags(fs, &o.settings)
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile to `FILE`")
	fs.StringVar(&o.opProfile, "op-profile", "", "emulator: write the time of each op of each kernel to `FILE` when the run ends (a table, the most time first)")
	return fs
}

// execProgram replaces the process with this program and argv; it is a variable for tests.
var execProgram = func(argv []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// The new program catches SIGINT and SIGTERM from its init on (restartedEnv). One that comes in the
	// milliseconds before takes the default action and ends it, with the checkpoint just saved intact.
	env := os.Environ()
	if os.Getenv(restartedEnv) == "" {
		env = append(env, restartedEnv+"=1")
	}
	return syscall.Exec(exe, append([]string{os.Args[0]}, argv...), env)
}

func runScript(args []string, stdout, stderr io.Writer) int {
	var o runOptions
	fs := runFlags(&o)
	script, overrides, code := o.parse("run", fs, args, stdout, stderr, func(w io.Writer) { runUsage(w, fs) })
	if code >= 0 {
		return code
	}
	backend, err := openBackend(o.backend, o.settings, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n", err)
		return exitError
	}
	if o.opProfile != "" {
		write, err := clockOps(backend, o.opProfile)
		if err != nil {
			fmt.Fprintf(stderr, "anestar run: --op-profile %s: %v\n", o.opProfile, err)
			return exitUsage
		}
		defer func() {
			if err := write(); err != nil {
				fmt.Fprintf(stderr, "anestar run: --op-profile %s: %v\n", o.opProfile, err)
			}
		}()
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "anestar run: --cpuprofile %s: %v\n", o.cpuprofile, pathError(err))
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "anestar run: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	in := watchInterrupts(stderr)
	defer in.release()
	argv := append([]string{"run"}, args...)
	res, err := builtins.Run(in.ctx, builtins.Config{
		Script:   script,
		Backend:  backend,
		Settings: o.settings, // the chip, for ane.eligible (the backend has it for compiling)
		Params:   overrides,
		Args:     fs.Args()[1:],
		Resume:   o.resume,
		Seed:     o.seed,
		Stdout:   stdout,
		Stderr:   stderr,
		Quiet:    o.quiet,
		Terminal: isTerminal(stdout),
		Argv:     argv,
		Stop:     in.stop,
		Warn:     stderr,
		Exec: func(argv []string) error {
			if err := in.beforeExec(); err != nil {
				return err
			}
			if o.cpuprofile != "" {
				pprof.StopCPUProfile()
			}
			err := execProgram(argv)
			in.afterFailedExec()
			return err
		},
	})
	switch {
	case in.signal() != nil:
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, builtins.ErrInterrupted) {
			reportError(stderr, err) // the script failed while stopping: say why
		}
		return in.report(stderr, res, o.resume)
	case err == nil && res.Exec != nil:
		return exitOK // only when execProgram returned without replacing the process (tests)
	case err == nil:
		return exitOK
	}
	reportError(stderr, err)
	return exitError
}

// reportError writes a script's error: the Starlark backtrace when there is one (it names the script
// line of each call), else the message.
func reportError(stderr io.Writer, err error) {
	var ee *starlark.EvalError
	if !errors.As(err, &ee) {
		fmt.Fprintf(stderr, "anestar: %v\n", err)
		return
	}
	// As EvalError.Backtrace, but without the builtin's name twice: when the error is the builtin's
	// own (a BuiltinError: every anestar builtin's, and fail's), the last frame names it and the cause
	// follows; go.starlark.net's other errors start with their builtin's name already.
	stack, msg := ee.CallStack, ee.Msg
	in := ""
	if last := len(stack) - 1; last >= 0 && stack[last].Pos.Filename() == "<builtin>" {
		var be *builtins.BuiltinError
		if errors.As(ee.Unwrap(), &be) && be.Name == stack[last].Name && be.Error() == msg {
			in, msg = " in "+be.Name, be.Err.Error()
		}
		stack = stack[:last]
	}
	fmt.Fprintf(stderr, "%sError%s: %s\n", stack, in, msg)
}

// isTerminal reports whether w is a terminal, where progress lines redraw in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && metrics.IsTerminal(f)
}

// checkSettings checks --set keys and value types against the script's params() call before it runs,
// so that a mistyped flag is a usage error and not a failure after minutes of training.
func checkSettings(script string, overrides map[string]string) error {
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil {
		return nil // the run reports syntax errors
	}
	if ps == nil {
		if len(overrides) > 0 && !mayDeclareParams(script) {
			return fmt.Errorf("--set %s: %s declares no parameters (it calls params() nowhere)", slices.Sorted(maps.Keys(overrides))[0], script)
		}
		return nil // params() is called elsewhere; the run checks the settings then
	}
	known := map[string]builtins.Param{}
	var names []string
	for _, p := range ps {
		known[p.Name] = p
		names = append(names, p.Name)
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p, ok := known[k]
		if !ok {
			hint := ""
			if near := nearest(k, names); near != "" {
				hint = "; did you mean " + near + "?"
			}
			return fmt.Errorf("--set %s: %s has no parameter %s%s (its parameters: %s)", k, script, k, hint, strings.Join(names, ", "))
		}
		if p.Default != nil {
			if _, err := builtins.ParseValue(nil, k, overrides[k], p.Default); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkPositional refuses a positional argument KEY=VALUE whose KEY is one of the script's parameters: it
// is almost surely a forgotten --set, which would otherwise run with the default silently.
func checkPositional(script string, args []string) error {
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil || len(ps) == 0 {
		return nil
	}
	for _, a := range args {
		k, _, ok := strings.Cut(a, "=")
		if !ok {
			continue
		}
		for _, p := range ps {
			if p.Name == k {
				return fmt.Errorf("argument %s: %s is a parameter of %s; did you mean --set %s?", a, k, script, a)
			}
		}
	}
	return nil
}

// mayDeclareParams reports whether script might call params(): it calls it somewhere, or loads a file
// that might.
func mayDeclareParams(script string) bool {
	f, err := builtins.FileOptions.Parse(script, nil, 0)
	if err != nil {
		return true
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.LoadStmt:
			found = true
		case *syntax.CallExpr:
			if id, ok := n.Fn.(*syntax.Ident); ok && id.Name == "params" {
				found = true
			}
		}
		return !found
	})
	return found
}

func backendNames() []string {
	var names []string
	for _, s := range ane.List() {
		names = append(names, s.Name)
	}
	return names
}

func knownBackend(name string) bool {
	return name == "" || name == "auto" || slices.Contains(backendNames(), name)
}

// runUsage prints the usage and the flags.
func runUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: anestar SCRIPT.star [flags] [args]\n       anestar run SCRIPT.star [flags] [args]\n\n")
	fmt.Fprintf(w, "Runs a Starlark training script. Exit codes: 0 success, 1 script error, 2 usage error, 130 interrupted (SIGINT), 143 terminated (SIGTERM).\n\nFlags:\n")
	fmt.Fprint(w, flagUsages(fs))
}

// flagUsages lists fs's flags as pflag's FlagUsages does, but without the "[=true|false]" that
// pflag writes after every bool flag.
func flagUsages(fs *pflag.FlagSet) string {
	type row struct{ left, usage string }
	var rows []row
	width := 0
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		left := "      --" + f.Name
		if f.Shorthand != "" {
			left = "  -" + f.Shorthand + ", --" + f.Name
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" && f.Value.Type() != "bool" {
			left += " " + varname
		}
		switch f.DefValue {
		case "", "false", "0", "[]":
		default:
			if f.Value.Type() == "string" {
				usage += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				usage += " (default " + f.DefValue + ")"
			}
		}
		rows = append(rows, row{left, usage})
		width = max(width, len(left))
	})
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%-*s   %s\n", width, r.left, r.usage)
	}
	return b.String()
}

// pathError shortens an *fs.PathError about a missing file or folder to what a user needs.
func pathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
		if _, derr := os.Stat(filepath.Dir(pe.Path)); derr != nil {
			return fmt.Errorf("the folder %s does not exist", filepath.Dir(pe.Path))
		}
		return fmt.Errorf("%s does not exist", pe.Path)
	}
	return err
}

// nearest returns the name of names closest to s by edit distance, when it is close enough to be a
// likely typo, else "".
func nearest(s string, names []string) string {
	best, bestD := "", 0
	for _, n := range names {
		if d := editDistance(strings.ToLower(s), strings.ToLower(n)); best == "" || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > max(1, len(s)/3) {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (with adjacent transpositions) of a and b in bytes.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// scriptExists checks the script path before a run, for a message that says what is wrong with it.
func scriptExists(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such script", path)
	case err != nil:
		return err
	case st.IsDir():
		return fmt.Errorf("%s is a folder; want a .star script", path)
	}
	return nil
}

// scriptParamsUsage lists the parameters of script with their defaults and descriptions, read
// without running it; it returns the exit code.
func scriptParamsUsage(w io.Writer, script string) int {
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil {
		fmt.Fprintf(w, "\nCannot list the parameters of %s: %v\n", script, pathError(err))
		return exitError
	}
	if len(ps) == 0 {
		fmt.Fprintf(w, "\n%s declares no parameters.\n", script)
		return exitOK
	}
	fmt.Fprintf(w, "\nParameters of %s (--set NAME=VALUE):\n", script)
	width := 0
	for _, p := range ps {
		width = max(width, len(p.Name)+3+len(p.Text))
	}
	for _, p := range ps {
		line := p.Name + " = " + p.Text
		if p.Doc != "" {
			fmt.Fprintf(w, "  %-*s  %s\n", width, line, p.Doc)
		} else {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return exitOK
}
