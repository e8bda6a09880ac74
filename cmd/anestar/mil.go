package main

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/atomicfile"
	"github.com/anestar/anestar/mil"
	"github.com/spf13/pflag"
)

func init() {
	register(command{
		name:    "mil",
		args:    "SUBCOMMAND [flags] FILE.mil",
		summary: "check, format or run MIL programs (anestar mil --help lists the subcommands)",
		run:     runMil,
	})
}

// milCommand is one subcommand of `anestar mil`. Each lives in its own file; files other than this one
// add theirs to milCommands from init.
type milCommand struct {
	args    string  // argument synopsis for help
	summary string  // one line for `anestar mil --help`
	run     runFunc // runs it; returns the exit code
}

// milCommands are the subcommands of `anestar mil`, by name.
var milCommands = map[string]milCommand{
	"check": {args: "[flags] FILE.mil...", summary: "parse and type-check programs; print each function's signature", run: runMilCheck},
	"fmt":   {args: "[-w | -l] FILE.mil...", summary: "print programs in canonical form, or rewrite the files (-w)", run: runMilFmt},
}

// runMil dispatches to the subcommand named by args[0].
func runMil(args []string, stdout, stderr io.Writer) int {
	find := func(name string) (runFunc, bool) {
		c, ok := milCommands[name]
		return c.run, ok
	}
	return dispatchSub("mil", args, stdout, stderr, find, milUsage)
}

func milUsage(w io.Writer) {
	fmt.Fprint(w, `anestar mil works with programs in MIL, the Model Intermediate Language the Apple Neural Engine
compiles. It reads the dialect of the reference generators (program(1.3), func main<ios18>, fp16(0.5))
and the one Apple's compiler writes (program(1.0), tensor<string, []>("x") scalars, hex floats, ...).

Usage:
  anestar mil SUBCOMMAND [flags] [args]

Subcommands:
`)
	var names []string
	for n := range milCommands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := milCommands[n]
		fmt.Fprintf(w, "  %-32s %s\n", n+" "+c.args, c.summary)
	}
	fmt.Fprint(w, "\nRun `anestar mil SUBCOMMAND --help` for a subcommand's flags.\n")
}

// milFlags returns a flag set that reports errors to the caller instead of printing them.
func milFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("mil "+name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// milParseArgs parses the flags of subcommand name; it prints help or a usage error itself and then
// returns a non-negative exit code, else -1 and the file arguments.
func milParseArgs(name, help string, fs *pflag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, int) {
	err := fs.Parse(args)
	showHelp := errors.Is(err, pflag.ErrHelp)
	if h := fs.Lookup("help"); h != nil && h.Value.String() == "true" {
		showHelp = true // --help anywhere, even after the file: show help, never run the file
	}
	switch {
	case showHelp:
		fmt.Fprint(stdout, help)
		return nil, exitOK
	case err == nil && fs.NArg() == 0:
		err = errors.New("no MIL file given")
	}
	if err != nil {
		fmt.Fprintf(stderr, "anestar mil %s: %v\nRun 'anestar mil %s --help' for usage.\n", name, err, name)
		return nil, exitUsage
	}
	return fs.Args(), -1
}

// maxMILFile bounds the MIL text read, far above any real program (the six kernels of the main job are
// about 100 KB).
const maxMILFile = 1 << 30

// readMIL reads and parses a MIL file; errors have the form FILE:LINE:COL: message where the place is known.
func readMIL(file string) (*mil.Program, []byte, error) {
	src, err := safefile.ReadFile(file, maxMILFile)
	if err != nil {
		return nil, nil, err
	}
	p, err := mil.Parse(file, src)
	return p, src, err
}

// placeAfterPrefix matches a message whose MIL place follows a layer's prefixes ("emulator: compile: 4:9: ...").
var placeAfterPrefix = regexp.MustCompile(`^((?:[a-z][a-z ]*: )+)(\d+:\d+): (.*)$`)

// printFileErrors writes err to w one line per problem, each starting with the file name: "FILE:LINE:COL:
// message" for errors that know their place, "FILE: message" otherwise.
func printFileErrors(w io.Writer, file string, err error) {
	for _, line := range strings.Split(err.Error(), "\n") {
		if m := placeAfterPrefix.FindStringSubmatch(line); m != nil {
			line = m[2] + ": " + m[1] + m[3] // "emulator: compile: 4:9: msg" -> "4:9: emulator: compile: msg"
		}
		if !strings.HasPrefix(line, file+":") {
			if line != "" && line[0] >= '0' && line[0] <= '9' {
				line = file + ":" + line
			} else {
				line = file + ": " + line
			}
		}
		fmt.Fprintln(w, line)
	}
}

const milCheckHelp = `Usage: anestar mil check [flags] FILE.mil...

Parses each file, then type-checks it with the op table (every op known, arguments of the right types and
shapes, declared result types equal to the inferred ones, every name defined once before use, a func main).
For a valid file it prints the file name and version, then each function's signature and op count:

  kernel.mil: program(1.3)
    main<ios18>(tensor<fp16, [1, 768, 1, 512]> x) -> (tensor<fp16, [1, 4608, 1, 512]> out): 83 ops

Problems go to standard error, one line each, as FILE:LINE:COL: message.

With --ane it also judges each valid program by the rules the Apple Neural Engine is known to have
(ane.Eligible: rank-4 I/O with a width that is a multiple of 32, fp16 arithmetic, the ops the reference
sources ran on hardware, a conv or matmul anchor, ...) and prints the verdict: the parts the ANE refuses
as errors, those not known either way as warnings. Every file is judged, whatever an earlier one got.

Flags:
      --ane     judge each program by the ANE's known rules too
  -q, --quiet   print nothing for valid files (and, with --ane, for eligible ones)
  -h, --help    show this help

Exit status: 0 when every file is valid (and, with --ane, none is refused); 1 when a file cannot be
read, does not parse, fails the check or, with --ane, is refused; 2 for a usage error.
`

func runMilCheck(args []string, stdout, stderr io.Writer) int {
	fs := milFlags("check")
	quiet := fs.BoolP("quiet", "q", false, "print nothing for valid files")
	hw := fs.Bool("ane", false, "judge each program by the ANE's known rules too")
	var chipName string
	addChipFlag(fs, &chipName)
	files, code := milParseArgs("check", milCheckHelp, fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	chip, err := ane.ParseChip(chipName)
	if err != nil {
		fmt.Fprintf(stderr, "anestar mil check: --chip: %v\n", err)
		return exitUsage
	}
	code = exitOK
	for _, file := range files {
		p, _, err := readMIL(file)
		if err == nil {
			err = mil.Check(p)
		}
		if err != nil {
			printFileErrors(stderr, file, err)
			code = exitError
			continue
		}
		var v ane.Verdict
		if *hw {
			v = ane.EligibleOn(p, chip)
			if v.Support() == ane.Refused {
				code = exitError
			}
		}
		if *quiet && v.Support() == ane.Proven {
			continue
		}
		fmt.Fprintf(stdout, "%s: program(%s)\n", file, p.Version)
		for _, f := range p.Funcs {
			fmt.Fprintf(stdout, "  %s: %d ops\n", signature(f), len(f.Ops))
		}
		if *hw {
			writeVerdict(stdout, "  ", v)
		}
	}
	return code
}

// signature writes "name<opset>(T in, ...) -> (T out, ...)", with the output types looked up among the
// function's inputs and op results.
func signature(f *mil.Func) string {
	types := map[string]mil.Type{}
	var b strings.Builder
	b.WriteString(f.Name)
	if f.Opset != "" {
		fmt.Fprintf(&b, "<%s>", f.Opset)
	}
	b.WriteString("(")
	for i, in := range f.Inputs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", in.Type, in.Name)
		types[in.Name] = in.Type
	}
	for _, op := range f.Ops {
		for _, r := range op.Results {
			types[r.Name] = r.Type
		}
	}
	b.WriteString(") -> (")
	for i, out := range f.Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		if t, ok := types[out.Name]; ok {
			fmt.Fprintf(&b, "%s ", t)
		}
		b.WriteString(out.Name)
	}
	b.WriteString(")")
	return b.String()
}

const milFmtHelp = `Usage: anestar mil fmt [-w | -l] FILE.mil...

Parses each file and prints it in canonical form: the dialect of the reference generators (program(1.3)
header kept as written, one op per line, x=y arguments, [name=string("...")] attributes, floats in the
shortest form that reads back exactly). Scalars keep their spelling (fp16(0.5) or tensor<fp16, []>(0.5)) and
comments are dropped. Formatting does not type-check; use anestar mil check for that.

Flags:
  -w, --write   write the canonical form back to each file that differs, instead of printing it
  -l, --list    print the names of the files whose formatting differs, instead of the text
  -h, --help    show this help

Exit status: 0 on success; 1 when a file cannot be read, does not parse or cannot be written; 2 for a
usage error.
`

func runMilFmt(args []string, stdout, stderr io.Writer) int {
	fs := milFlags("fmt")
	write := fs.BoolP("write", "w", false, "rewrite the files")
	list := fs.BoolP("list", "l", false, "list files that differ")
	files, code := milParseArgs("fmt", milFmtHelp, fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	code = exitOK
	for _, file := range files {
		p, src, err := readMIL(file)
		if err != nil {
			printFileErrors(stderr, file, err)
			code = exitError
			continue
		}
		out := []byte(mil.Print(p))
		changed := !bytes.Equal(src, out)
		if *list && changed {
			fmt.Fprintln(stdout, file)
		}
		if *write && changed {
			if err := writeFileAtomic(file, out); err != nil {
				fmt.Fprintf(stderr, "anestar mil fmt: %v\n", err)
				code = exitError
			}
		}
		if !*list && !*write {
			stdout.Write(out)
		}
	}
	return code
}

// writeFileAtomic replaces file with data through a temporary file in the same folder, keeping its mode,
// so that a failed write leaves the old file whole. A symbolic link is written through: its target is
// replaced and the link stays.
func writeFileAtomic(file string, data []byte) error {
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return err
	}
	info, err := os.Stat(target)
	if err != nil {
		return err
	}
	return atomicfile.Write(target, data, info.Mode().Perm())
}
