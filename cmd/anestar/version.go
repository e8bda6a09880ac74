package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is the release; builds from a checkout also print the VCS revision.
const version = "0.1.0"

func init() {
	register(command{name: "version", summary: "print the version, Go version and platform", run: runVersion})
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, "Usage: anestar version\n\nPrints the anestar version, the VCS revision it was built from, the Go version and the platform.")
			return exitOK
		}
		fmt.Fprintf(stderr, "anestar version: takes no arguments\n")
		return exitUsage
	}
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " (" + s.Value[:12] + ")"
			}
		}
	}
	fmt.Fprintf(stdout, "anestar %s%s %s %s/%s\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return exitOK
}
