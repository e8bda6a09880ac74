// Command anestar trains neural networks on the Apple Neural Engine from Starlark scripts.
//
// Usage:
//
//	anestar SCRIPT.star [flags]        run a training script (same as `anestar run`)
//	anestar COMMAND [flags] [args]     run one of the commands listed by `anestar help`
//
// Exit codes: 0 success, 1 script or runtime error, 2 usage error, 130 interrupted.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
)

// Exit codes shared by every command.
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

// command is one subcommand of anestar. Each lives in its own file and registers itself from init.
type command struct {
	name    string  // word on the command line
	args    string  // argument synopsis for help
	summary string  // one line for `anestar help`
	run     runFunc // runs it; returns the exit code
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func main() {
	setGC()
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

// dispatch runs the command named by args[0]; a first argument ending in .star runs a script.
func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch {
	case name == "-h" || name == "--help" || name == "help":
		if len(args) > 1 {
			c, ok := commands[args[1]]
			if !ok {
				fmt.Fprintf(stderr, "anestar help: unknown command %q\n\n", args[1])
				usage(stderr)
				return exitUsage
			}
			return c.run([]string{"--help"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	case name == "--version":
		name = "version"
	case strings.HasSuffix(name, ".star"), strings.HasPrefix(name, "-") && slices.ContainsFunc(args, isScript):
		// anestar SCRIPT.star [flags], or run's flags first: anestar --relaxed SCRIPT.star
		name, args = "run", append([]string{"run"}, args...)
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "anestar: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	if name != "version" {
		if err := checkEnvironment(); err != nil {
			fmt.Fprintf(stderr, "anestar: %v\n", err)
			return exitUsage
		}
	}
	return c.run(args[1:], stdout, stderr)
}

// isScript reports whether a command-line argument names a script.
func isScript(arg string) bool {
	return strings.HasSuffix(arg, ".star") && !strings.HasPrefix(arg, "-")
}

func usage(w io.Writer) {
	fmt.Fprint(w, `anestar trains neural networks on the Apple Neural Engine from Starlark scripts.
Where no ANE exists, an emulator runs the same MIL programs on the CPU with the ANE's fp16 numerics.

Usage:
  anestar SCRIPT.star [flags]     run a script (same as: anestar run SCRIPT.star)
  anestar COMMAND [flags] [args]

Commands:
`)
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  %-34s %s\n", strings.TrimSpace(n+" "+c.args), c.summary)
	}
	envUsage(w)
	fmt.Fprint(w, "\nRun `anestar help COMMAND` or `anestar COMMAND --help` for a command's flags.\n")
}
