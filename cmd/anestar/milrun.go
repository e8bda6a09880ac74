package main

import (
	"context"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
	"github.com/anestar/anestar/npy"
)

func init() {
	milCommands["run"] = milCommand{
		args:    "[flags] FILE.mil | DIR",
		summary: "compile a program on a backend, evaluate it on .npy or random inputs, write the outputs as .npy",
		run:     runMilRun,
	}
}

const milRunHelp = `Usage: anestar mil run [flags] FILE.mil | DIR

Compiles FILE.mil (or DIR/model.mil, a model directory written by a script's p.save(DIR)) on a backend,
fills each input of main from a .npy file (--in) or with seeded uniform random values in [-1, 1), evaluates it --evals times and prints, for each output, its shape, min, max, mean and count of inf/NaN values, and the time per eval. With --out, each output is written to
DIR/NAME.npy in the output's dtype (fp16 or fp32).

Weight files named in the program as @model_path/PATH are read from DIR/PATH, DIR being --weights (default:
the directory of FILE.mil, or DIR).

Flags:
`

// milRunOptions are the flags of `anestar mil run`.
type milRunOptions struct {
	weights  string
	ins      []string
	out      string
	evals    int
	backend  string
	settings ane.Settings // --fp32, --check-numerics, --relaxed
	seed     uint64
}

func runMilRun(args []string, stdout, stderr io.Writer) int {
	var o milRunOptions
	fs := milFlags("run")
	fs.StringVar(&o.weights, "weights", "", "directory that @model_path names (default: the MIL file's directory)")
	fs.StringArrayVar(&o.ins, "in", nil, "input from a .npy file, `NAME=FILE.npy` (repeatable)")
	fs.StringVar(&o.out, "out", "", "write each output to `DIR`/NAME.npy")
	fs.IntVar(&o.evals, "evals", 1, "number of evaluations to time")
	fs.StringVar(&o.backend, "backend", "auto", "auto, ane or emulator (auto honours "+ane.EnvBackend+")")
	addSettingFlags(fs, &o.settings)
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random inputs")
	fs.BoolP("help", "h", false, "show this help")
	files, code := milParseArgs("run", milRunHelp+fs.FlagUsages(), fs, args, stdout, stderr)
	if code >= 0 {
		return code
	}
	if len(files) != 1 {
		fmt.Fprintf(stderr, "anestar mil run: want one MIL file, got %d\n", len(files))
		return exitUsage
	}
	if o.evals < 1 {
		fmt.Fprintf(stderr, "anestar mil run: --evals %d: want at least 1\n", o.evals)
		return exitUsage
	}
	if err := milRun(files[0], o, stdout, stderr); err != nil {
		printFileErrors(stderr, files[0], err)
		return exitError
	}
	return exitOK
}

// milRun does the work of `anestar mil run` on one file.
func milRun(file string, o milRunOptions, stdout, stderr io.Writer) error {
	dir := o.weights
	if st, err := os.Stat(file); err == nil && st.IsDir() { // a model directory (p.save): DIR/model.mil
		if dir == "" {
			dir = file
		}
		file = filepath.Join(file, mil.ModelFile)
	}
	p, _, err := readMIL(file)
	if err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Dir(file)
	}
	w, err := loadWeights(p, dir)
	if err != nil {
		return err
	}
	b, err := openBackend(o.backend, o.settings, stderr)
	if err != nil {
		return err
	}
	k, err := b.Compile(p, w)
	if err != nil {
		return err
	}
	defer k.Close()
	given := map[string]string{}
	for _, s := range o.ins {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("--in %q: want NAME=FILE.npy", s)
		}
		given[name] = path
	}
	for i, s := range k.Inputs() {
		n := s.Channels() * s.Spatial()
		vals := make([]float32, n)
		if path, ok := given[s.Name()]; ok {
			delete(given, s.Name())
			a, err := npy.ReadFile(path)
			if err != nil {
				return fmt.Errorf("input %s: %w", s.Name(), err)
			}
			if !slices.Equal(squeeze(a.Shape), squeeze(s.Type().Shape)) {
				return fmt.Errorf("input %s: %s holds shape %v (%d values), the input is %s: want that shape (dims of 1 may be left out)", s.Name(), path, a.Shape, len(a.Data), s.Type())
			}
			vals = a.Data
		} else {
			// One stream per input, so that an input's values do not depend on which others are given.
			rng := rand.New(rand.NewPCG(o.seed, uint64(i)))
			for j := range vals {
				vals[j] = float32(2*rng.Float64() - 1)
			}
		}
		if err := s.WriteChannels(0, s.Channels(), vals); err != nil {
			return err
		}
	}
	for name := range given {
		return fmt.Errorf("--in %s: main has no input called %q", name, name)
	}
	fmt.Fprintf(stdout, "backend: %s\n", b.Name())
	ctx := context.Background()
	start := time.Now()
	for range o.evals {
		if err := k.Eval(ctx); err != nil {
			return err
		}
	}
	per := time.Since(start) / time.Duration(o.evals)
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
	}
	for _, s := range k.Outputs() {
		vals := make([]float32, s.Channels()*s.Spatial())
		if err := s.ReadChannels(0, s.Channels(), vals); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s: %s\n", s.Name(), s.Type(), summarize(vals))
		if o.out != "" {
			a := &npy.Array{Shape: append([]int{}, s.Type().Shape...), DType: npy.F32, Data: vals}
			if s.Type().DType == mil.FP16 {
				a.DType = npy.F16
			}
			if err := npy.WriteFile(filepath.Join(o.out, s.Name()+".npy"), a); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "time per eval: %.3f ms (%d evals)\n", float64(per.Microseconds())/1000, o.evals)
	return nil
}

// summarize returns "min .. max .. mean .. inf/NaN .." over the finite values of v.
func summarize(v []float32) string {
	lo, hi, sum, bad, n := math.Inf(1), math.Inf(-1), 0.0, 0, 0
	for _, x := range v {
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			bad++
			continue
		}
		lo, hi, sum, n = math.Min(lo, f), math.Max(hi, f), sum+f, n+1
	}
	if n == 0 {
		return fmt.Sprintf("no finite values, inf/NaN %d", bad)
	}
	return fmt.Sprintf("min %.6g max %.6g mean %.6g inf/NaN %d", lo, hi, sum/float64(n), bad)
}

// loadWeights reads every weight file that main's consts name: @model_path/PATH from dir/PATH.
func loadWeights(p *mil.Program, dir string) (mil.Weights, error) {
	w := mil.Weights{}
	for _, f := range p.Funcs {
		for _, op := range f.Ops {
			for _, a := range op.Attrs {
				if a.Value == nil || a.Value.Blob == nil {
					continue
				}
				path := a.Value.Blob.Path
				if _, ok := w[path]; ok {
					continue
				}
				rel, err := mil.WeightFileRel(path)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", a.Pos, err)
				}
				// Links are resolved before the check: a link in the folder cannot reach a file outside it.
				full, err := safefile.Within(dir, filepath.FromSlash(rel))
				if err != nil {
					return nil, fmt.Errorf("%s: weight file %q: %w", a.Pos, path, err)
				}
				data, err := safefile.ReadFile(full, 0)
				if err != nil {
					return nil, fmt.Errorf("%s: weight file %q: %w", a.Pos, path, err)
				}
				w[path] = data
			}
		}
	}
	return w, nil
}

// squeeze returns shape without its dims of 1: a [C, S] array fills a [1, C, 1, S] input.
func squeeze(shape []int) []int {
	var out []int
	for _, d := range shape {
		if d != 1 {
			out = append(out, d)
		}
	}
	return out
}
