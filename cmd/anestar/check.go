package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/mil"
	"github.com/spf13/pflag"
)

func init() {
	register(command{
		name:    "check",
		args:    "SCRIPT.star [flags] [args]",
		summary: "dry-run a script: check every kernel's program, compile and train nothing",
		run:     checkScript,
	})
}

// checkOptions are the flags of `anestar check`.
type checkOptions struct {
	scriptFlags
	chip string // --chip: whose limits apply
}

func checkFlags(o *checkOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("check", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	o.add(fs, "the backend ane.backend() names: auto, ane or emulator (nothing is compiled)",
		"check the script's resume path (process.resume)",
		"discard the script's print output; show only what was checked")
	// The backend settings of run change no shape; check accepts and ignores them, so that a run's
	// command line can be checked by changing only the command. Check judges every program by the ANE's
	// rules whatever they say.
	addChipFlag(fs, &o.chip)
	var ignored bool
	for _, name := range []string{"fp32", "check-numerics", "relaxed"} {
		fs.BoolVar(&ignored, name, false, "accepted for run's command line; no effect")
		fs.MarkHidden(name)
	}
	return fs
}

func checkUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: anestar check SCRIPT.star [flags] [args]\n\n")
	fmt.Fprintf(w, "Runs the script as a dry run: process.dry_run is True, ane.compile checks each program (op\n"+
		"argument types and shapes, weights) but compiles nothing, and kernel.eval is an error. A script\n"+
		"builds every kernel and stops before training when process.dry_run is True, so a size that does\n"+
		"not fit is reported in a second. Prints each program checked with what the ANE is known to do\n"+
		"with it (ane.eligible): parts it refuses as errors, parts not known either way as warnings; a\n"+
		"refused program does not stop the check, so every kernel is listed. The flags --fp32,\n"+
		"--check-numerics and --relaxed of run are accepted and ignored.\n"+
		"Exit codes: 0 ok, 1 script error or a program the ANE refuses, 2 usage error, 130 interrupted.\n\nFlags:\n")
	fmt.Fprint(w, flagUsages(fs))
}

func checkScript(args []string, stdout, stderr io.Writer) int {
	var o checkOptions
	fs := checkFlags(&o)
	script, overrides, code := o.parse("check", fs, args, stdout, stderr, func(w io.Writer) { checkUsage(w, fs) })
	if code >= 0 {
		return code
	}
	if err := checkChip(o.chip); err != nil {
		fmt.Fprintf(stderr, "anestar check: --chip: %v\n", err)
		return exitUsage
	}
	chip, _ := ane.ParseChip(o.chip)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()
	fmt.Fprintf(stdout, "chip %s: %s\n", chip.Name, chipLimits(chip))
	res, err := builtins.Run(ctx, builtins.Config{
		Script:      script,
		Settings:    ane.Settings{Chip: o.chip},
		BackendName: o.backend,
		Params:      overrides,
		Args:        fs.Args()[1:],
		Resume:      o.resume,
		Seed:        o.seed,
		Stdout:      stdout,
		Quiet:       o.quiet,
		Terminal:    isTerminal(stdout),
		DryRun:      true,
		Argv:        append([]string{"check"}, args...),
	})
	elapsed := time.Since(start)
	refused := 0
	if res != nil {
		for _, c := range res.Checked {
			writeChecked(stdout, c)
			if c.Verdict.Support() == ane.Refused {
				refused++
			}
		}
	}
	switch {
	case err == nil && refused > 0:
		fmt.Fprintf(stderr, "check failed: the ANE refuses %s of %d (the emulator runs them only with --relaxed)\n",
			plural(refused, "program"), len(res.Checked))
		return exitError
	case err == nil:
		n := 0
		if res != nil {
			n = len(res.Checked)
		}
		fmt.Fprintf(stdout, "ok: %s checked in %s\n", plural(n, "program"), formatElapsed(elapsed))
		if n == 0 {
			fmt.Fprintf(stdout, "(the script called ane.compile on no program: does it build its kernels when process.dry_run is True?)\n")
		}
		return exitOK
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "anestar: interrupted\n")
		return exitInterrupted
	}
	reportError(stderr, err)
	fmt.Fprintf(stderr, "check failed after %s\n", formatElapsed(elapsed))
	return exitError
}

// writeChecked prints one checked program: where it was compiled, its size, and its I/O types.
func writeChecked(w io.Writer, c builtins.CheckedProgram) {
	where := c.Where()
	weights := ""
	if c.WeightBytes > 0 {
		weights = ", weights " + formatBytes(c.WeightBytes)
	}
	fmt.Fprintf(w, "checked %s: %s, %s%s\n", where, plural(c.Ops, "op"), plural(c.Consts, "const"), weights)
	writeVars(w, "in ", c.Inputs)
	writeVars(w, "out", c.Outputs)
	writeVerdict(w, "  ", c.Verdict)
}

func writeVars(w io.Writer, label string, vs []*mil.Var) {
	for _, v := range vs {
		fmt.Fprintf(w, "  %s %s %s\n", label, v.Name, v.Type)
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// formatElapsed writes d as whole milliseconds under a second, else as seconds to the hundredth.
func formatElapsed(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// formatBytes writes n as B, KiB or MiB.
func formatBytes(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
