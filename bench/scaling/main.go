// Command scaling tabulates how anestar's cost grows with the model, at the shapes of the llama2.c
// family (stories260K, 15M, 42M, 110M): scripts/train_lm.star's ms/step, tokens/s, peak memory and
// utilisation (the model's FLOPs per step over the step's time, against the host's measured sgemm
// peak, both as `anestar check` gives them) next to the PyTorch peer's at the same shapes and batch
// (bench/compare -mode lm, equal steps, train_lm.star's hyperparameters given to both); and
// scripts/sample.star's greedy generation (tokens/s, the time to the first token, peak memory) next
// to llama2.c's run.c on a model file of each shape, with the same prompt and length.
//
// The token data are uniform random ids (the speed of a step does not depend on them), written for
// each shape; the model files are llama2.c's random initialisation (scripts/testdata/llama2_random.star)
// unless -model names a real one for a shape; the vocabulary is a placeholder whose pieces 3-258 are
// the bytes and 259 a space, so that run.c encodes the prompt as sample.star does (byte fallback) and
// both print ids. run.c is built outside the repository (llama2.c's `make run`, gcc -O3) and given as
// -runc; without it, and without PyTorch, those columns are left out.
//
// A shape's batch is what fits two trainers' memory one after the other on a 24 GB machine; the
// largest run few steps (ms/step is the median of the steps after the first three, as compare gives
// it). The table goes to standard output as Markdown, the runs' own output to standard error.
//
//	go run ./bench/scaling -runc /path/to/llama2.c/run                   every shape (about 30 minutes)
//	go run ./bench/scaling -shapes 260K,15M -runc run -model 260K=stories260K.bin
//	go run ./bench/scaling -train=false -runc run                        generation alone (a few minutes)
//	go run ./bench/scaling -shapes tiny=32/96/2/4/4/300/64/2             a shape of one's own:
//	                                    dim/hidden/layers/heads/kv_heads/vocab/seq/batch
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// config is the command line.
type config struct {
	shapes     string
	train, gen bool // the parts to run
	steps      int
	threads    string
	genSteps   int
	reps       int
	prompt     string
	runc       string
	python     string
	models     []string
	work       string
	anestar    string
	compareBin string
	timeV      string
	log        io.Writer // where the runs' output goes
}

// models collects repeated -model SHAPE=FILE flags.
type models []string

func (m *models) String() string     { return strings.Join(*m, ",") }
func (m *models) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	var c config
	var ms models
	flag.StringVar(&c.shapes, "shapes", "260K,15M,42M,110M", "the shapes, comma-separated: 260K, 15M, 42M, 110M, or name=dim/hidden/layers/heads/kv_heads/vocab/seq/batch")
	flag.BoolVar(&c.train, "train", true, "measure training (-train=false: generation alone)")
	flag.BoolVar(&c.gen, "gen", true, "measure generation (-gen=false: training alone)")
	flag.IntVar(&c.steps, "steps", 0, "training steps per run (0: the shape's own, 5-8; at least 4, as compare measures the steps after the first three)")
	flag.StringVar(&c.threads, "threads", "1", "the peer's torch thread counts, comma-separated (its best is taken)")
	flag.IntVar(&c.genSteps, "gen-steps", 64, "tokens to generate after the prompt")
	flag.IntVar(&c.reps, "reps", 3, "generation runs of each side, alternating (medians)")
	flag.StringVar(&c.prompt, "prompt", "Once upon a time", "the generation prompt")
	flag.StringVar(&c.runc, "runc", "", "llama2.c's run, built outside the repository (gcc -O3 run.c -lm): generation's comparison")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python that has PyTorch")
	flag.Var(&ms, "model", "a real model file for a shape, `SHAPE=FILE` (repeatable), e.g. 260K=stories260K.bin: generation runs on it instead of a random one")
	flag.StringVar(&c.work, "work", "", "a folder for the data, models and results (default: a temporary one, removed at the end)")
	flag.Parse()
	c.models, c.log = ms, os.Stderr
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scaling:", err)
		os.Exit(1)
	}
}

// run measures every shape of c and prints the table to out.
func run(c config, out io.Writer) error {
	if _, err := os.Stat("scripts/train_lm.star"); err != nil {
		return fmt.Errorf("run scaling from the repository's root (scripts/train_lm.star not found)")
	}
	shapes, err := parseShapes(c.shapes)
	if err != nil {
		return err
	}
	given, err := parseModels(c.models, shapes)
	if err != nil {
		return err
	}
	if c.steps != 0 && c.steps < 4 {
		return fmt.Errorf("-steps %d: at least 4 (compare measures the steps after the first three)", c.steps)
	}
	if !c.train && !c.gen {
		return fmt.Errorf("-train=false -gen=false: nothing to measure")
	}
	if c.genSteps < 1 || c.reps < 1 {
		return fmt.Errorf("-gen-steps and -reps must be at least 1")
	}
	if c.work == "" {
		tmp, err := os.MkdirTemp("", "scaling-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		c.work = tmp
	}
	if c.work, err = filepath.Abs(c.work); err != nil {
		return err
	}
	if c.runc != "" {
		if c.runc, err = filepath.Abs(c.runc); err != nil {
			return err
		}
	}
	c.anestar, c.compareBin = filepath.Join(c.work, "anestar"), filepath.Join(c.work, "compare")
	for _, b := range [][2]string{{c.anestar, "./cmd/anestar"}, {c.compareBin, "./bench/compare"}} {
		if err := c.cmd("go", "build", "-o", b[0], b[1]).Run(); err != nil {
			return fmt.Errorf("go build %s: %w", b[1], err)
		}
	}
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		c.timeV = "/usr/bin/time"
	}
	var rows []row
	for _, s := range shapes {
		fmt.Fprintf(c.log, "== %s ==\n", s.name)
		r, err := measure(c, s, given[s.name])
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rows = append(rows, r)
	}
	printTable(out, c, rows)
	return nil
}

// cmd is argv as a command whose output goes to c's log.
func (c config) cmd(argv ...string) *exec.Cmd {
	x := exec.Command(argv[0], argv[1:]...)
	x.Stdout, x.Stderr = c.log, c.log
	return x
}
