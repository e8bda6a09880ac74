package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/anestar/anestar/ane"
	_ "github.com/anestar/anestar/ane/emulator" // registers the emulator backend
	_ "github.com/anestar/anestar/ane/private"  // registers the Neural Engine backend (usable on darwin)
	"github.com/anestar/anestar/builtins"
	"github.com/spf13/pflag"
	"go.starlark.net/starlark"
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
	backend       string
	set           []string
	resume        bool
	seed          uint64
	fp32          bool
	checkNumerics bool
	quiet         bool
	cpuprofile    string
	help          bool
}

func runFlags(o *runOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.StringVar(&o.backend, "backend", "auto", "where kernels run: auto, ane or emulator")
	fs.StringArrayVar(&o.set, "set", nil, "set a script parameter, `KEY=VALUE` (VALUE a Starlark literal; repeatable)")
	fs.BoolVar(&o.resume, "resume", false, "continue from the script's checkpoint (process.resume)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the random generator")
	fs.BoolVar(&o.fp32, "fp32", false, "emulator: compute in plain fp32, without fp16 rounding")
	fs.BoolVar(&o.checkNumerics, "check-numerics", false, "emulator: fail at the first op whose output holds inf or NaN")
	fs.BoolVar(&o.quiet, "quiet", false, "discard the script's print output")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile to `FILE`")
	fs.BoolVarP(&o.help, "help", "h", false, "show this help and the script's parameters")
	return fs
}

// execProgram replaces the process with this program and argv; it is a variable for tests.
var execProgram = func(argv []string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return syscall.Exec(exe, append([]string{os.Args[0]}, argv...), os.Environ())
}

func runScript(args []string, stdout, stderr io.Writer) int {
	var o runOptions
	fs := runFlags(&o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n\n", err)
		runUsage(stderr, fs, "")
		return exitUsage
	}
	rest := fs.Args()
	if o.help {
		script := ""
		if len(rest) > 0 {
			script = rest[0]
		}
		return runUsage(stdout, fs, script)
	}
	if len(rest) == 0 {
		fmt.Fprintf(stderr, "anestar run: missing SCRIPT.star\n\n")
		runUsage(stderr, fs, "")
		return exitUsage
	}
	script := rest[0]
	if _, err := os.Stat(script); err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n", err)
		return exitUsage
	}
	overrides, err := builtins.ParseSet(o.set)
	if err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n", err)
		return exitUsage
	}
	if err := checkSettings(script, overrides); err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n", err)
		return exitUsage
	}
	if !knownBackend(o.backend) {
		fmt.Fprintf(stderr, "anestar run: unknown backend %q (want auto, %s)\n", o.backend, strings.Join(backendNames(), ", "))
		return exitUsage
	}
	opts := ane.Options{CheckNumerics: o.checkNumerics}
	if o.fp32 {
		opts.Numerics = ane.FP32
	}
	backend, err := ane.Open(o.backend, opts)
	if err != nil {
		fmt.Fprintf(stderr, "anestar run: %v\n", err)
		return exitError
	}
	if o.cpuprofile != "" {
		f, err := os.Create(o.cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "anestar run: %v\n", err)
			return exitError
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "anestar run: %v\n", err)
			return exitError
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	argv := append([]string{"run"}, args...)
	res, err := builtins.Run(ctx, builtins.Config{
		Script:  script,
		Backend: backend,
		Params:  overrides,
		Args:    rest[1:],
		Resume:  o.resume,
		Seed:    o.seed,
		Stdout:  stdout,
		Quiet:   o.quiet,
		Argv:    argv,
		Exec: func(argv []string) error {
			if o.cpuprofile != "" {
				pprof.StopCPUProfile()
			}
			return execProgram(argv)
		},
	})
	switch {
	case err == nil && res.Exec != nil:
		return exitOK // only when execProgram returned without replacing the process (tests)
	case err == nil:
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "anestar: interrupted\n")
		return exitInterrupted
	}
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "%s\n", ee.Backtrace())
	} else {
		fmt.Fprintf(stderr, "anestar: %v\n", err)
	}
	return exitError
}

// checkSettings checks --set keys and value types against the script's params() call before it runs,
// so that a mistyped flag is a usage error and not a failure after minutes of training.
func checkSettings(script string, overrides map[string]string) error {
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil || ps == nil {
		return nil // the run reports syntax errors and checks again when params() is called
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
			return fmt.Errorf("--set %s: %s has no parameter %s (its parameters: %s)", k, script, k, strings.Join(names, ", "))
		}
		if p.Default != nil {
			if _, err := builtins.ParseValue(nil, k, overrides[k], p.Default); err != nil {
				return err
			}
		}
	}
	return nil
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

// runUsage prints the flags and, given a script, its parameters; it returns exitOK.
func runUsage(w io.Writer, fs *pflag.FlagSet, script string) int {
	fmt.Fprintf(w, "Usage: anestar SCRIPT.star [flags] [args]\n       anestar run SCRIPT.star [flags] [args]\n\n")
	fmt.Fprintf(w, "Runs a Starlark training script. Exit codes: 0 success, 1 script error, 2 usage error, 130 interrupted.\n\nFlags:\n")
	fmt.Fprint(w, fs.FlagUsages())
	if script == "" {
		return exitOK
	}
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil {
		fmt.Fprintf(w, "\n%s: %v\n", script, err)
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
