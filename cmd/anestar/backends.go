package main

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
)

func init() {
	register(command{
		name:    "backends",
		summary: "list the kernel backends, which can run here and why not",
		run:     runBackends,
	})
}

// runBackends prints every registered backend, most preferred first, with its availability, then what
// "auto" picks, which BLAS the host math uses (version, core and how the core was chosen) and its peak.
func runBackends(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintf(stdout, "Usage: anestar backends\n\nLists the kernel backends, most preferred first, whether each can run on this machine and,\nif not, why. `auto` takes the first available one unless %s names another.\n", ane.EnvBackend)
			return exitOK
		}
		fmt.Fprintln(stderr, "anestar backends: takes no arguments")
		return exitUsage
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BACKEND\tPRIORITY\tSTATUS\tSUMMARY")
	auto := ""
	for _, s := range ane.List() {
		status := "available"
		if s.Err != nil {
			status = "unavailable: " + s.Err.Error()
		} else if auto == "" {
			auto = s.Name
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", s.Name, s.Priority, status, s.Summary)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nplatform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	if auto == "" {
		auto = "(none available)"
	}
	fmt.Fprintf(stdout, "auto: %s (%s overrides)\n", auto, ane.EnvBackend)
	fmt.Fprintf(stdout, "host BLAS: %s; %s forces one\n", cpu.CurrentBLASInfo(), cpu.BLASEnv)
	f16 := "the BLAS"
	if cpu.F16GemmName() == "amx" {
		f16 = "AMX tiles (bf16 split, fp32 sums)"
	}
	fmt.Fprintf(stdout, "emulator fp16 products: %s; %s=off keeps them on the BLAS\n", f16, cpu.AMXEnv)
	if info := cpu.CurrentBLASInfo(); info.Config != "" {
		fmt.Fprintf(stdout, "BLAS build: %s\n", info.Config)
	}
	peak := fmt.Sprintf("host sgemm peak: %.3f TFLOP/s", cpu.PeakFLOPS()/1e12)
	if f := cpu.PeakFLOPSFile(); f != "" {
		peak += " (measured once, cached in " + f + "; delete it to measure again)"
	}
	fmt.Fprintln(stdout, peak)
	return exitOK
}
