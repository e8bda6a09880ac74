package main

import (
	"fmt"
	"io"
)

// runFunc runs a command or subcommand on its arguments and returns the exit code.
type runFunc func(args []string, stdout, stderr io.Writer) int

// dispatchSub runs the subcommand of `anestar group` named by args[0], looked up by find. No
// subcommand, or an unknown one, is a usage error; "help", -h or --help prints usage to stdout,
// or runs the subcommand named after it with --help.
func dispatchSub(group string, args []string, stdout, stderr io.Writer, find func(name string) (runFunc, bool), usage func(io.Writer)) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == "-h" || name == "--help" || name == "help" {
		if len(args) > 1 {
			run, ok := find(args[1])
			if !ok {
				fmt.Fprintf(stderr, "anestar %s help: unknown subcommand %q\n\n", group, args[1])
				usage(stderr)
				return exitUsage
			}
			return run([]string{"--help"}, stdout, stderr)
		}
		usage(stdout)
		return exitOK
	}
	run, ok := find(name)
	if !ok {
		fmt.Fprintf(stderr, "anestar %s: unknown subcommand %q\n\n", group, name)
		usage(stderr)
		return exitUsage
	}
	return run(args[1:], stdout, stderr)
}
