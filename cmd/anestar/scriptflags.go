package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/anestar/anestar/builtins"
	"github.com/spf13/pflag"
)

// scriptFlags are the flags that run and check share.
type scriptFlags struct {
	backend string
	set     []string
	resume  bool
	seed    uint64
	quiet   bool
	help    bool
}

// add defines the shared flags on fs; the command gives the help of those whose meaning differs.
func (o *scriptFlags) add(fs *pflag.FlagSet, backendHelp, resumeHelp, quietHelp string) {
	fs.StringVar(&o.backend, "backend", "auto", backendHelp)
	fs.StringArrayVar(&o.set, "set", nil, "set a script parameter, `KEY=VALUE` (VALUE a Starlark literal; repeatable)")
	fs.BoolVar(&o.resume, "resume", false, resumeHelp)
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the random generator; for a script with a seed parameter, the same as --set seed=N")
	fs.BoolVar(&o.quiet, "quiet", false, quietHelp)
	fs.BoolVarP(&o.help, "help", "h", false, "show this help and the script's parameters")
}

// parse parses args into fs (which holds o's flags) for `anestar cmd`. With --help it writes
// usage and the parameters of the script named, if any, to stdout. Otherwise it checks what must
// hold before a script runs: a script is named and exists, the --set and --seed settings fit its
// parameters, and --backend names a backend. It returns the script and its parameter settings
// and -1, or the exit code to return after writing the error (with usage, for a flag error or a
// missing script) to stderr.
func (o *scriptFlags) parse(cmd string, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer, usage func(io.Writer)) (string, map[string]string, int) {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "anestar %s: %v\n\n", cmd, err)
		usage(stderr)
		return "", nil, exitUsage
	}
	rest := fs.Args()
	if o.help {
		usage(stdout)
		if len(rest) > 0 {
			return "", nil, scriptParamsUsage(stdout, rest[0])
		}
		return "", nil, exitOK
	}
	if len(rest) == 0 {
		fmt.Fprintf(stderr, "anestar %s: missing SCRIPT.star\n\n", cmd)
		usage(stderr)
		return "", nil, exitUsage
	}
	script := rest[0]
	err := scriptExists(script)
	var overrides map[string]string
	if err == nil {
		overrides, err = builtins.ParseSet(o.set)
	}
	if err == nil {
		err = applySeedFlag(script, fs.Changed("seed"), o.seed, overrides)
	}
	if err == nil {
		err = checkSettings(script, overrides)
	}
	if err == nil {
		err = checkPositional(script, rest[1:])
	}
	if err == nil && !knownBackend(o.backend) {
		err = fmt.Errorf("unknown backend %q (want auto, %s)", o.backend, strings.Join(backendNames(), ", "))
	}
	if err != nil {
		fmt.Fprintf(stderr, "anestar %s: %v\n", cmd, err)
		return "", nil, exitUsage
	}
	return script, overrides, -1
}
