// Command compare measures anestar's training side by side with the project's own PyTorch peers
// (bench/peers) on the same machine, in one run. It has two modes.
//
// -mode layer (the default): anestar's single-layer training (scripts/train_layer.star on the emulator,
// in fp16 and fp32 numerics) against bench/peers/torch_layer.py (the same layer, shapes, loss and
// optimizer cadence in PyTorch eager mode, at 1 and 2 threads). anestar's ms/step is the median of the
// per-step times in the script's metrics file (--set metrics=PATH; compile excluded), and its "Avg
// train" line of the efficiency report is shown beside it.
//
// -mode lm: anestar's language model (scripts/train_lm.star, fp16 and fp32 as -modes) against the
// language-model peer bench/peers/torch_lm.py on the same token files (-train, -val, and -tokenizer for
// bits per byte), the same model (train_lm.star's default sizes and batch, given to both unless -set
// says otherwise; each -set goes to both sides, k=v to the peer as --k v) and the same seeds. Two
// footings:
//
//   - equal steps (the default): every run trains -steps steps;
//   - equal wall time, -budget S: every run trains S seconds of wall time (train_lm.star's budget=S,
//     the peer's --budget S: the compile and the final validation are outside it, and each lays its
//     warmup and cosine over the steps that fit, re-estimated as it goes), -steps ignored; the report
//     gives the steps each run fitted.
//
// -same-start (equal steps only) makes a seed's runs one start apart from nothing: the peer writes the
// seed's initial weights (a llama2.c file) and the offsets of its -steps batches (its --write-start),
// and every run of the seed trains from them (train_lm.star's init and batches, the peer's --init and
// --batches). Without it, a seed is the same seed on both sides but two draws (each its own generator);
// with it the paired differences are of the trainers' arithmetic alone.
//
// The hyperparameters (lr, min_lr, warmup, weight_decay, clip, dropout) not in -set are, with
// -defaults shared (the default without -budget), train_lm.star's given to both sides, dropout 0
// (-set dropout=0.1 to give both one); with -defaults own (the default with -budget), each side's own:
// train_lm.star's on anestar's (its dropout chosen by the passes the run makes), the peer's (lr 1e-3,
// warmup 20, min-lr lr/10, no dropout) on PyTorch's.
// train_lm.star fixes AdamW's betas at 0.9/0.95; the peer takes --beta1/--beta2 but compare gives
// them to neither.
//
// -text names the corpus the token files were made from (bench/peers/prep_lm.py's TEXT): anestar then
// also trains on the text itself with a vocabulary of its own (run "anestar fp16 text"), as a user
// would, validating on the same last 10 % of bytes; it compares by bits per byte.
//
// compare copies the scripts (the script's folder of .star files) and the peers into its temporary
// folder as it starts: every run reads what the tree held then, though it is edited meanwhile.
//
// Seeds: -reps N runs seeds -seed .. -seed+N-1, or -seeds names them (1,2,5 or 1..4; not with -reps or
// -seed); every side runs every seed, so the runs sample the run-to-run spread. The report gives per
// run the median steps, ms/step (the steps after the first three) and tokens/s, the mean ± sample
// standard deviation over the seeds of val_loss and val_bpb, and the ratio to the peer's best thread
// setting (of the medians); then each anestar run's ratio to that peer seed by seed (the median and
// range of the seeds' ratios: a seed's two runs are neighbours in time, so a machine whose speed drifts
// during the run moves both alike); then each seed's val_bpb per run; then each run minus the first (anestar's), paired by seed:
// the mean difference ± its standard error, the differences' sd, and in how many seeds it was lower.
//
// -json FILE (lm mode) also writes every run's result to FILE, a JSON line each, for programs that
// tabulate them (bench/scaling).
//
// -cores runs every configuration under each OpenBLAS core setting ("default": OPENBLAS_CORETYPE
// unset; or a core such as SkylakeX), and each ratio is to the peer under the same setting.
//
// In both modes -base-peer names a second peer script with the same command line (an older version, or
// another implementation) run alternately with the first, as "base pytorch"; -base runs a second
// anestar binary likewise, as "base fp16" and "base fp32" (with -base-script, the script as it was
// when that binary was built).
//
// The runs alternate (anestar fp16, anestar fp32, peer 1 thread, peer 2 threads, then again), so that
// load from other work on a shared machine falls on all of them alike; each is repeated -reps times and
// the report gives the median ms/step of each, the ratios to the peer's best thread setting, the
// compile time per batch and the peak resident memory (from /usr/bin/time -v where it exists). A peer
// is skipped, with a message, where PyTorch (or the peer script) is absent. For timings that use
// OpenBLAS (anestar's and Debian's PyTorch) set OPENBLAS_CORETYPE=SkylakeX on this CPU.
//
//	go run ./bench/compare                                  reference sizes (dim 768, seq 512)
//	go run ./bench/compare -reps 5 -steps 20
//	go run ./bench/compare -base /tmp/anestar-old          before/after a change, interleaved
//	go run ./bench/compare -base /tmp/old/anestar -base-script /tmp/old/scripts/train_layer.star
//	go run ./bench/compare -set dim=256 -set hidden=512 -set heads=4 -set seq=128   a quick check
//	go run ./bench/compare -cores default,SkylakeX -set dim=384 -set hidden=1024 -set heads=6 -set seq=256
//	go run ./bench/compare -mode lm -train D/train.bin -val D/val.bin -tokenizer D/tokenizer.bin \
//	    -set vocab=1024 -set dim=256 -set layers=4 -set heads=4 -set seq=128 -set batch=8 -steps 300
//	go run ./bench/compare -mode lm -train D/train.bin -val D/val.bin -tokenizer D/tokenizer.bin \
//	    -modes fp16 -budget 300 -seeds 1..4             equal wall time, each side's own defaults
//	go run ./bench/compare -mode lm -train D/train.bin -val D/val.bin -tokenizer D/tokenizer.bin \
//	    -modes fp16 -steps 1500 -seeds 1..4 -set lr=1e-3 -set warmup=20     equal steps, the same hyperparameters
//	go run ./bench/compare -mode lm -train D/train.bin -val D/val.bin -tokenizer D/tokenizer.bin \
//	    -modes fp16,fp32 -steps 1500 -seeds 1..4 -same-start     the same weights and batches too
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// sets collects repeated -set k=v flags.
type sets []string

func (s *sets) String() string     { return strings.Join(*s, ",") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

// config is the command line.
type config struct {
	mode               string
	reps, steps, accum int
	sets               sets
	anestar, script    string
	base, baseScript   string
	peer, basePeer     string
	python             string
	threads            string
	modes              string
	train, val, tok    string         // lm mode: token files and tokenizer
	text               string         // lm mode: -text, the corpus the token files were made from (prep_lm.py)
	seed               int            // lm mode: the first rep's seed
	seeds              string         // lm mode: -seeds, the reps' seeds as a list ("" for -reps from -seed)
	seedList           []int          // lm mode: the seeds of the reps, from seeds or reps and seed
	budget             float64        // lm mode: seconds of wall time per run, 0 for -steps steps
	defaults           string         // lm mode: "shared", "own" or "" (own with a budget)
	cores              string         // -cores: OpenBLAS core settings
	json               string         // lm mode: -json, a file for every run's result, one JSON line each
	sameStart          bool           // lm mode: every run of a seed starts from the same weights and trains on the same batches
	starts             map[int]string // -same-start: each seed's start, the path prefix of its .bin and .batches.npy
}

// result is one run's figures.
type result struct {
	ms        float64 // median ms/step
	avg       float64 // the report's Avg train, anestar only
	compileMS float64 // the report's Avg compile per batch, anestar only
	rssKB     float64 // peak resident set, 0 when unknown
	tokensS   float64 // lm mode: tokens per second
	valLoss   float64 // lm mode: the final validation loss
	valBPB    float64 // lm mode: its bits per byte, 0 without a tokenizer
	seed      int     // lm mode: the run's seed, which pairs it with the other sides' runs
	steps     int     // lm mode: the steps trained (with a budget, as many as fitted)
}

// A run is one named configuration, run once per rep.
type run struct {
	name string
	fn   func(rep int) (result, error)
}

// The peers' default places, in the repository (run compare from its root).
const (
	layerPeer = "bench/peers/torch_layer.py"
	lmPeer    = "bench/peers/torch_lm.py"
)

// The training scripts of the two modes.
const (
	layerScript = "scripts/train_layer.star"
	lmScript    = "scripts/train_lm.star"
)

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "layer", "what to compare: layer (scripts/train_layer.star and the layer peer) or lm (the language-model peer)")
	flag.IntVar(&c.reps, "reps", 3, "repetitions of each run (lm mode: seeds -seed, -seed+1, ...; or -seeds)")
	flag.IntVar(&c.steps, "steps", 20, "measured training steps per run (lm mode: training steps)")
	flag.IntVar(&c.accum, "accum", 10, "steps per optimizer update (both sides; layer mode)")
	flag.Var(&c.sets, "set", "a parameter `k=v`, repeatable: layer mode passes it to the script, and dim, hidden, heads, seq to the peer too; lm mode passes each to the peer as --k v (kv_heads as --kv-heads)")
	flag.StringVar(&c.anestar, "anestar", "", "the anestar binary (default: go build ./cmd/anestar into a temporary directory)")
	flag.StringVar(&c.base, "base", "", "a second anestar binary (say, built before a change) run alternately with the first, as \"base\"")
	flag.StringVar(&c.script, "script", layerScript, "the training script (in lm mode "+lmScript+")")
	flag.StringVar(&c.baseScript, "base-script", "", "the script the -base binary runs (default -script): the script as it was when that binary was built")
	flag.StringVar(&c.peer, "peer", "", "the PyTorch peer script (default "+layerPeer+", in lm mode "+lmPeer+")")
	flag.StringVar(&c.basePeer, "base-peer", "", "a second peer script taking the same arguments, run alternately with the first, as \"base pytorch\"")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python that has PyTorch")
	flag.StringVar(&c.threads, "threads", "", "peer thread counts (default 1,2; in lm mode 1)")
	flag.StringVar(&c.modes, "modes", "fp16,fp32", "anestar numerics to run (layer mode); \"\" for none: the peers alone")
	flag.StringVar(&c.cores, "cores", "", "OpenBLAS core settings to run every configuration under, comma-separated: \"default\" (OPENBLAS_CORETYPE unset: anestar names the kernels, PyTorch's OpenBLAS picks its own) or a core name such as SkylakeX; A/P gives anestar A and the peers P, e.g. default/Haswell; \"\" leaves the environment as it is")
	flag.StringVar(&c.train, "train", "", "lm mode: the training tokens (uint16 .bin)")
	flag.StringVar(&c.val, "val", "", "lm mode: the validation tokens (uint16 .bin)")
	flag.StringVar(&c.tok, "tokenizer", "", "lm mode: the tokens' llama2.c tokenizer.bin, for val_bpb")
	flag.StringVar(&c.text, "text", "", "lm mode: the text the token files were made from (bench/peers/prep_lm.py's TEXT): anestar also trains on it with its own vocabulary (\"anestar fp16 text\"), validating on the same last 10 % of bytes")
	flag.IntVar(&c.seed, "seed", 1, "lm mode: the seed of rep 1; rep i uses seed+i-1")
	flag.StringVar(&c.seeds, "seeds", "", "lm mode: the reps' seeds, a `list` such as 1,2,3 or 1..4 (instead of -reps and -seed): every side runs each seed, and the runs are paired by seed")
	flag.Float64Var(&c.budget, "budget", 0, "lm mode: `seconds` of wall time each run trains (train_lm.star's budget, the peer's --budget: the schedule laid over the steps that fit; -steps ignored); 0 for -steps steps")
	flag.StringVar(&c.defaults, "defaults", "", "lm mode: the training hyperparameters (lr, min_lr, warmup, weight_decay, clip, dropout) not in -set: shared (train_lm.star's given to both, dropout 0) or own (each side its own defaults); default own with -budget, shared without")
	flag.BoolVar(&c.sameStart, "same-start", false, "lm mode: for each seed the peer writes initial weights and -steps batches' offsets (its --write-start) and every run of that seed trains from them (train_lm.star's init and batches, the peer's --init and --batches): the paired differences are then of the trainers' arithmetic alone, not of two draws")
	flag.StringVar(&c.json, "json", "", "lm mode: a `file` to write every run's result to, a JSON line each (run, seed, steps, ms, tokens_s, val_loss, val_bpb, rss_kb), for programs that tabulate them (bench/scaling)")
	flag.Parse()
	err := checkFlags(c, given())
	switch {
	case err != nil:
	case c.mode == "layer":
		err = compareLayer(c)
	case c.mode == "lm":
		err = compareLM(c)
	default:
		err = fmt.Errorf("-mode %q: want layer or lm", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// given is the names of the flags the command line set.
func given() map[string]bool {
	out := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { out[f.Name] = true })
	return out
}

// checkFlags refuses flags that would be ignored: the lm mode's in layer mode, and -seeds beside the
// -reps or -seed it replaces.
func checkFlags(c config, given map[string]bool) error {
	if c.mode == "layer" {
		for _, f := range []string{"budget", "seeds", "defaults", "text", "json", "same-start"} {
			if given[f] {
				return fmt.Errorf("-%s is for -mode lm (layer mode trains -steps steps without a seed)", f)
			}
		}
	}
	if given["seeds"] && (given["reps"] || given["seed"]) {
		return fmt.Errorf("-seeds lists the reps' seeds: give it or -reps and -seed, not both")
	}
	if given["same-start"] && (given["budget"] || given["text"]) {
		return fmt.Errorf("-same-start gives every run the batches of -steps steps and one vocabulary's weights: it takes neither -budget nor -text")
	}
	return nil
}

// timeV is /usr/bin/time when it exists (for peak memory), else "".
func timeV() string {
	const p = "/usr/bin/time"
	if _, err := os.Stat(p); err != nil {
		fmt.Println("note: /usr/bin/time not found (apt-get install time): peak memory not measured")
		return ""
	}
	return p
}

// alternate runs every run once per rep, in turn, printing each result as it comes.
func alternate(reps int, runs []run, show func(result) string) (map[string][]result, error) {
	all := map[string][]result{}
	for rep := range reps {
		for _, r := range runs {
			res, err := r.fn(rep)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			fmt.Printf("  rep %d  %-20s %s\n", rep+1, r.name, show(res))
			all[r.name] = append(all[r.name], res)
		}
	}
	return all, nil
}

// peerScripts are the peer runs to make: the peer and, with -base-peer, the base peer, each available.
func peerScripts(c config, def string) []struct{ label, path string } {
	if c.peer == "" {
		c.peer = def
	}
	var out []struct{ label, path string }
	for _, p := range []struct{ label, path string }{{"pytorch", c.peer}, {"base pytorch", c.basePeer}} {
		if p.path == "" {
			continue
		}
		if ok, why := peerAvailable(c.python, p.path); !ok {
			fmt.Printf("skipping %s: %s\n", p.label, why)
			continue
		}
		out = append(out, p)
	}
	return out
}

// peerAvailable reports whether the peer script exists and python imports torch.
func peerAvailable(python, script string) (bool, string) {
	if _, err := os.Stat(script); err != nil {
		return false, fmt.Sprintf("no peer script at %s (-peer; run compare from the repository's root)", script)
	}
	if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err != nil {
		return false, fmt.Sprintf("%s cannot import torch (apt-get install python3-torch): %v %s", python, err, lastLine(out))
	}
	return true, ""
}

// peerRecord is the JSON result line a peer prints last.
type peerRecord struct {
	Peer    string   `json:"peer"`
	MS      float64  `json:"ms_per_step"`
	TokS    float64  `json:"tokens_per_s"` // the LM peer's
	ValLoss float64  `json:"val_loss"`     // the LM peer's
	ValBPB  *float64 `json:"val_bpb"`      // the LM peer's, null without a tokenizer
	Steps   int      `json:"steps"`        // the LM peer's steps trained
}

// runPeer runs a peer's argv and returns its result line and peak RSS in KB.
func runPeer(timeV string, argv []string) (peerRecord, float64, error) {
	out, rss, err := timed(timeV, argv, nil)
	if err != nil {
		return peerRecord{}, 0, err
	}
	for _, line := range strings.Split(out, "\n") {
		var rec peerRecord
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Peer != "" {
			return rec, rss, nil
		}
	}
	return peerRecord{}, 0, fmt.Errorf("no JSON result line in the peer's output:\n%s", tail(out, 10))
}

// timed runs argv, under /usr/bin/time -v when timeV is set, and returns its output and peak RSS in KB.
func timed(timeV string, argv []string, env []string) (string, float64, error) {
	if timeV != "" {
		argv = append([]string{timeV, "-v"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	s := out.String()
	if err != nil {
		return s, 0, fmt.Errorf("%v: %w\n%s", strings.Join(argv, " "), err, tail(s, 20))
	}
	var rss float64
	if m := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(s); m != nil {
		rss, _ = strconv.ParseFloat(m[1], 64)
	}
	return s, rss, nil
}

func opt(v float64) string {
	if v == 0 {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func med(rs []result, f func(result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return median(v)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func lastLine(b []byte) string { return tail(string(b), 1) }
