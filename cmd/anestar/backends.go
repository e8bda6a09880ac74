package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
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
	recalibrate := false
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprintf(stdout, "Usage: anestar backends [--recalibrate | --chip CHIP]\n\nLists the kernel backends, most preferred first, whether each can run on this machine and,\n"+
			"if not, why. `auto` takes the first available one unless %s names another. Then the host BLAS\n"+
			"and its sgemm peak, the denominator of the reports' utilisation: measured once per machine and\n"+
			"cached. --recalibrate measures it again (on an idle machine) and replaces the cached figure.\n"+
			"--chip CHIP (%s) prints that chip's profile instead: its limits, which programs are\n"+
			"checked against, and its warnings, with their sources.\n", ane.EnvBackend, strings.Join(ane.ChipNames(), ", "))
		return exitOK
	case len(args) == 1 && args[0] == "--recalibrate":
		recalibrate = true
	case len(args) == 2 && args[0] == "--chip", len(args) == 1 && strings.HasPrefix(args[0], "--chip="):
		name := strings.TrimPrefix(args[len(args)-1], "--chip=")
		chip, err := ane.ParseChip(name)
		if err != nil {
			fmt.Fprintf(stderr, "anestar backends: --chip: %v\n", err)
			return exitUsage
		}
		writeChip(stdout, chip)
		return exitOK
	case len(args) > 0:
		fmt.Fprintf(stderr, "anestar backends: unexpected %q: the flags are --recalibrate and --chip CHIP\n", args[0])
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
	f16, f32 := "the BLAS", "the BLAS"
	if cpu.F16GemmName() == "amx" {
		f16 = "AMX tiles (exact split in two bf16 parts, fp32 sums)"
	}
	if cpu.GemmName() == "amx" {
		f32 = "AMX tiles (exact split in three bf16 parts, six of nine partial products, fp32 sums)"
	}
	fmt.Fprintf(stdout, "emulator fp16 products: %s\n", f16)
	fmt.Fprintf(stdout, "emulator fp32 products (--fp32): %s\n", f32)
	fmt.Fprintf(stdout, "%s=f16 keeps float32 products on the BLAS, %s=off all products\n", cpu.AMXEnv, cpu.AMXEnv)
	if info := cpu.CurrentBLASInfo(); info.Config != "" {
		fmt.Fprintf(stdout, "BLAS build: %s\n", info.Config)
	}
	var peak string
	switch {
	case recalibrate:
		peak = fmt.Sprintf("host sgemm peak: %.3f TFLOP/s (measured now", cpu.RecalibratePeakFLOPS()/1e12)
		if f := cpu.PeakFLOPSFile(); f != "" {
			peak += ", cached in " + f
		}
		peak += ")"
	default:
		peak = fmt.Sprintf("host sgemm peak: %.3f TFLOP/s", cpu.PeakFLOPS()/1e12)
		if f := cpu.PeakFLOPSFile(); f != "" {
			peak += " (measured once, cached in " + f + "; anestar backends --recalibrate measures it again)"
		}
	}
	fmt.Fprintln(stdout, peak)
	return exitOK
}

// chipLimits is a chip's limits on one line.
func chipLimits(c ane.Chip) string {
	return fmt.Sprintf("family %s; at most %d on an axis other than the channels, %d channels; conv kernels at most %d wide; about %d compiles per process",
		c.Family, c.SpatialCap, c.ChannelCap, c.ConvWidth, c.Budget)
}

// writeChip prints a chip's profile: its limits, its warnings and where they come from.
func writeChip(w io.Writer, c ane.Chip) {
	fmt.Fprintf(w, "chip %s: %s\n", c.Name, chipLimits(c))
	fmt.Fprintf(w, "warnings (reported, not refusals):\n")
	for _, n := range c.AllNotes() {
		fmt.Fprintf(w, "  %s\n    source: %s\n", n.Text, n.Source)
	}
	fmt.Fprintf(w, "sources of the limits:\n")
	for _, s := range ane.ChipSources() {
		fmt.Fprintf(w, "  %s\n", s)
	}
}
