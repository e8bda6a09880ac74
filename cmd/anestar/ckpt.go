package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/anestar/anestar/ckpt"
	"github.com/spf13/pflag"
)

func init() {
	register(command{
		name:    "ckpt",
		args:    "ls|diff [flags] FILE...",
		summary: "list a checkpoint's tensors and metadata, or compare two checkpoints",
		run:     runCkpt,
	})
}

// ckptCommands are the subcommands of `anestar ckpt`, by name.
var ckptCommands = map[string]struct {
	args, summary string
	run           runFunc
}{
	"ls":   {ckptLsArgs, ckptLsSummary, runCkptLs},
	"diff": {ckptDiffArgs, ckptDiffSummary, runCkptDiff},
}

const (
	ckptLsArgs      = "FILE"
	ckptLsSummary   = "print each tensor's name, dtype, shape, element count and bytes, then the metadata"
	ckptDiffArgs    = "A B"
	ckptDiffSummary = "print each tensor's largest absolute difference, and what only one file has"
)

func runCkpt(args []string, stdout, stderr io.Writer) int {
	find := func(name string) (runFunc, bool) {
		c, ok := ckptCommands[name]
		return c.run, ok
	}
	return dispatchSub("ckpt", args, stdout, stderr, find, ckptUsage)
}

func ckptUsage(w io.Writer) {
	fmt.Fprint(w, `anestar ckpt inspects checkpoints in the safetensors format (the files training scripts save)
and llama2.c model files (version 0 or 1; any file not named .safetensors whose first bytes are not
a safetensors header).

Usage:
  anestar ckpt SUBCOMMAND [flags] [args]

Subcommands:
`)
	for _, n := range []string{"ls", "diff"} {
		c := ckptCommands[n]
		fmt.Fprintf(w, "  %-14s %s\n", n+" "+c.args, c.summary)
	}
	fmt.Fprint(w, "\nExit status: 0 on success, 1 when a file is missing or not a valid checkpoint, 2 on a usage error.\n")
}

// ckptParse parses a subcommand's flags and checks that it got exactly nargs arguments. It
// returns the arguments, or an exit code to return at once.
func ckptParse(name, synopsis, summary string, fs *pflag.FlagSet, nargs int, args []string, stdout, stderr io.Writer) ([]string, int) {
	usage := func(w io.Writer) {
		fmt.Fprintf(w, "Usage: anestar ckpt %s [flags] %s\n\n%s.\n", name, synopsis, strings.ToUpper(summary[:1])+summary[1:])
		if fs.HasFlags() {
			fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
		}
	}
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stdout)
			return nil, exitOK
		}
		fmt.Fprintf(stderr, "anestar ckpt %s: %v\n", name, err)
		usage(stderr)
		return nil, exitUsage
	}
	if fs.NArg() != nargs {
		fmt.Fprintf(stderr, "anestar ckpt %s: want %d file argument(s), got %d\n", name, nargs, fs.NArg())
		usage(stderr)
		return nil, exitUsage
	}
	return fs.Args(), -1
}

func runCkptLs(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ckpt ls", pflag.ContinueOnError)
	metaOnly := fs.Bool("meta", false, "print only the metadata")
	files, code := ckptParse("ls", ckptLsArgs, ckptLsSummary, fs, 1, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if ckpt.IsLlama2File(files[0]) {
		return lsLlama2(files[0], *metaOnly, stdout, stderr)
	}
	f, err := ckpt.Load(files[0])
	if err != nil {
		fmt.Fprintf(stderr, "anestar ckpt ls: %v\n", err)
		return exitError
	}
	if !*metaOnly {
		names := ckptNames(f.Tensors)
		var total int
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tDTYPE\tSHAPE\tELEMENTS\tBYTES")
		for _, n := range names {
			t := f.Tensors[n]
			elems, _ := t.Len() // valid: Load checked it
			total += len(t.Data)
			fmt.Fprintf(tw, "%s\t%v\t%s\t%d\t%d\n", ckptQuote(n), t.DType, ckptShape(t.Shape), elems, len(t.Data))
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%d tensors, %d data bytes\n", len(names), total)
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 0 {
		fmt.Fprintln(stdout, "metadata:")
	}
	for _, k := range keys {
		fmt.Fprintf(stdout, "  %s = %s\n", ckptQuote(k), ckptQuote(f.Metadata[k]))
	}
	return exitOK
}

func runCkptDiff(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("ckpt diff", pflag.ContinueOnError)
	tol := fs.Float64("tol", 0, "count a tensor as different only when its largest difference exceeds this")
	files, code := ckptParse("diff", ckptDiffArgs, ckptDiffSummary, fs, 2, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if !(*tol >= 0) || math.IsInf(*tol, 0) {
		fmt.Fprintf(stderr, "anestar ckpt diff: --tol %v: want a finite difference of 0 or more\n", *tol)
		return exitUsage
	}
	var fa, fb *ckpt.File
	for i, p := range files {
		load := ckpt.Load
		if ckpt.IsLlama2File(p) {
			load = loadLlama2AsFile
		}
		f, err := load(p)
		if err != nil {
			fmt.Fprintf(stderr, "anestar ckpt diff: %v\n", err)
			return exitError
		}
		if i == 0 {
			fa = f
		} else {
			fb = f
		}
	}
	all := ckptNames(fa.Tensors)
	for _, n := range ckptNames(fb.Tensors) {
		if _, ok := fa.Tensors[n]; !ok {
			all = append(all, n)
		}
	}
	sort.Strings(all)
	var onlyA, onlyB, mismatched []string
	differ, compared := 0, 0
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDTYPE\tSHAPE\tMAX |A-B|")
	for _, n := range all {
		a, inA := fa.Tensors[n]
		b, inB := fb.Tensors[n]
		switch {
		case !inB:
			onlyA = append(onlyA, n)
			continue
		case !inA:
			onlyB = append(onlyB, n)
			continue
		case !slices.Equal(a.Shape, b.Shape):
			mismatched = append(mismatched, fmt.Sprintf("%s: %v%s in A, %v%s in B", ckptQuote(n), a.DType, ckptShape(a.Shape), b.DType, ckptShape(b.Shape)))
			continue
		}
		d := ckptMaxDiff(a, b)
		compared++
		if d > *tol || math.IsNaN(d) {
			differ++
		}
		dt := a.DType.String()
		if b.DType != a.DType {
			dt += "/" + b.DType.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\n", ckptQuote(n), dt, ckptShape(a.Shape), d)
	}
	tw.Flush()
	for _, n := range onlyA {
		fmt.Fprintf(stdout, "only in A: %s\n", ckptQuote(n))
	}
	for _, n := range onlyB {
		fmt.Fprintf(stdout, "only in B: %s\n", ckptQuote(n))
	}
	for _, m := range mismatched {
		fmt.Fprintf(stdout, "shapes differ: %s\n", m)
	}
	keys := map[string]bool{}
	for k := range fa.Metadata {
		keys[k] = true
	}
	for k := range fb.Metadata {
		keys[k] = true
	}
	var metaDiffs []string
	for k := range keys {
		va, inA := fa.Metadata[k]
		vb, inB := fb.Metadata[k]
		switch {
		case !inB:
			metaDiffs = append(metaDiffs, fmt.Sprintf("metadata only in A: %s = %s", ckptQuote(k), ckptQuote(va)))
		case !inA:
			metaDiffs = append(metaDiffs, fmt.Sprintf("metadata only in B: %s = %s", ckptQuote(k), ckptQuote(vb)))
		case va != vb:
			metaDiffs = append(metaDiffs, fmt.Sprintf("metadata %s: %s in A, %s in B", ckptQuote(k), ckptQuote(va), ckptQuote(vb)))
		}
	}
	sort.Strings(metaDiffs)
	for _, m := range metaDiffs {
		fmt.Fprintln(stdout, m)
	}
	fmt.Fprintf(stdout, "%d tensors compared, %d differ; %d only in A, %d only in B, %d with other shapes; %d metadata differences\n",
		compared, differ, len(onlyA), len(onlyB), len(mismatched), len(metaDiffs))
	return exitOK
}

// ckptMaxDiff returns the largest |a-b| over the elements of two tensors of one shape. Equal
// values (infinities and NaNs included) differ by 0; a NaN against a number, or infinities of
// opposite signs, by +Inf.
func ckptMaxDiff(a, b ckpt.Tensor) float64 {
	va, _ := a.Float64() // both were validated by Load
	vb, _ := b.Float64()
	maxd := 0.0
	for i := range va {
		x, y := va[i], vb[i]
		if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
			continue
		}
		d := math.Abs(x - y)
		if math.IsNaN(d) {
			d = math.Inf(1)
		}
		maxd = math.Max(maxd, d)
	}
	return maxd
}

// ckptNames returns the names of m's tensors, sorted.
func ckptNames(m map[string]ckpt.Tensor) []string { return slices.Sorted(maps.Keys(m)) }

// ckptShape prints a shape as [2 3], a scalar as [].
func ckptShape(s []int) string { return fmt.Sprint(append([]int{}, s...)) }

// ckptQuote leaves a plain printable string as it is and quotes anything else (empty,
// spaces at the ends, control characters), so that each entry stays on one line.
func ckptQuote(s string) string {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s, "\t") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}
