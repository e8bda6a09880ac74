package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// compareLM is -mode lm: the language-model peer (and -base-peer) on the same token files, alternately.
// Every run takes the same arguments; rep i runs with the i-th seed (lmSeeds) on every side, so that the
// paired differences of the validation loss measure one implementation against another, not two draws.
// Each run trains -steps steps, or with -budget for that many seconds of wall time; on train_lm.star's
// defaults given to both sides, or on each side's own (-defaults, lmParams).
//
// Another trainer joins as one more run: a func(rep) that trains at the same settings and seed and
// returns its result (ms, tokensS, valLoss, valBPB, steps); anestar's scripts/train_lm.star joins so.
func compareLM(c config) error {
	if c.train == "" || c.val == "" {
		return fmt.Errorf("-mode lm needs -train and -val token files (uint16 .bin; bench/peers/torch_lm.py says how they are read)")
	}
	if c.threads == "" {
		c.threads = "1"
	}
	if c.text != "" && c.tok == "" {
		return fmt.Errorf("-text needs -tokenizer: a run on its own vocabulary compares by bits per byte only")
	}
	if !(c.budget >= 0 && c.budget < 1e12) {
		return fmt.Errorf("-budget %v: seconds of wall time per run, 0 for none (train -steps steps)", c.budget)
	}
	if c.steps < 0 {
		return fmt.Errorf("-steps %d: may not be negative", c.steps)
	}
	own, err := ownDefaults(c.defaults, c.budget)
	if err != nil {
		return err
	}
	seeds, err := lmSeeds(c.seeds, c.seed, c.reps)
	if err != nil {
		return err
	}
	c.seedList, c.reps = seeds, len(seeds)
	tmp, modes, err := setup(&c)
	defer os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	if c.script == layerScript {
		c.script = lmScript
	}
	if c.peer == "" {
		c.peer = lmPeer
	}
	if err := snapshotAll(&c, tmp); err != nil {
		return err
	}
	params := lmParams(c.sets, own)
	args, err := lmArgs(params)
	if err != nil {
		return err
	}
	tv := timeV()
	if c.sameStart {
		if c.starts, err = writeStarts(c, tmp, args, seeds); err != nil {
			return err
		}
	}
	var runs []run
	for _, m := range modes {
		runs = append(runs, run{"anestar " + m, func(rep int) (result, error) {
			return runLMAnestar(c, c.anestar, c.script, "anestar", tmp, tv, m, params, seeds[rep], "")
		}})
		if c.text != "" {
			runs = append(runs, run{"anestar " + m + " text", func(rep int) (result, error) {
				return runLMAnestar(c, c.anestar, c.script, "text", tmp, tv, m, params, seeds[rep], c.text)
			}})
		}
		if c.base != "" {
			script := c.script
			if c.baseScript != "" {
				script = c.baseScript
			}
			runs = append(runs, run{"base " + m, func(rep int) (result, error) {
				return runLMAnestar(c, c.base, script, "base", tmp, tv, m, params, seeds[rep], "")
			}})
		}
	}
	for _, p := range peerScripts(c, lmPeer) {
		for _, t := range strings.Split(c.threads, ",") {
			t := strings.TrimSpace(t)
			runs = append(runs, run{p.label + " " + t + "t", func(rep int) (result, error) { return runLMPeer(c, p.path, tv, t, args, seeds[rep]) }})
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("nothing to run")
	}
	runs = withCores(c.cores, runs)
	all, err := alternate(c.reps, runs, func(r result) string {
		return fmt.Sprintf("seed %-3d %5d steps %8.1f ms/step %9.0f tok/s  val_loss %.4f  val_bpb %.4f  rss %5.0f MB",
			r.seed, r.steps, r.ms, r.tokensS, r.valLoss, r.valBPB, r.rssKB/1024)
	})
	if err != nil {
		return err
	}
	if c.json != "" {
		if err := writeJSON(c.json, runs, all); err != nil {
			return err
		}
	}
	return reportLM(c, own, runs, all)
}

// writeStarts has the peer write each seed's start (-same-start): initial weights (a llama2.c file) and
// the offsets of -steps batches, under tmp; it returns their path prefixes by seed.
func writeStarts(c config, tmp string, args []string, seeds []int) (map[int]string, error) {
	out := map[int]string{}
	for _, seed := range seeds {
		prefix := filepath.Join(tmp, fmt.Sprintf("start-%d", seed))
		argv := []string{c.python, c.peer, "--train", c.train, "--val", c.val, "--steps", strconv.Itoa(c.steps),
			"--seed", strconv.Itoa(seed), "--write-start", prefix}
		if _, _, err := timed("", append(argv, args...), nil); err != nil {
			return nil, fmt.Errorf("-same-start: seed %d: %w", seed, err)
		}
		out[seed] = prefix
	}
	return out, nil
}

// record is one run's result as -json writes it.
type record struct {
	Run     string  `json:"run"` // the run's name in the report: "anestar fp16", "pytorch 1t", ...
	Seed    int     `json:"seed"`
	Steps   int     `json:"steps"`
	MS      float64 `json:"ms"` // median ms per step after the first three
	TokensS float64 `json:"tokens_s"`
	ValLoss float64 `json:"val_loss"`
	ValBPB  float64 `json:"val_bpb,omitempty"`
	RSSKB   float64 `json:"rss_kb,omitempty"` // peak resident set, when /usr/bin/time measured it
}

// writeJSON writes every result of every run to path, a record per line, in the order of runs.
func writeJSON(path string, runs []run, all map[string][]result) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range runs {
		for _, x := range all[r.name] {
			if err := enc.Encode(record{r.name, x.seed, x.steps, x.ms, x.tokensS, x.valLoss, x.valBPB, x.rssKB}); err != nil {
				return err
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}

// lmSizes are train_lm.star's default sizes of the model and its batch, given to both sides always (the
// peer's own defaults differ), so that the same model trains on each side unless -set says otherwise.
var lmSizes = []string{"vocab=1024", "dim=256", "layers=4", "heads=4", "kv_heads=4", "hidden=704", "seq=128", "batch=8"}

// lmHyper are train_lm.star's default training hyperparameters, given to both sides with -defaults
// shared, but dropout 0 (the script chooses its own by the passes a run makes): dropout draws its masks
// differently on each side, and the equal-steps comparison is of the same deterministic computation.
// -set dropout=0.1 gives both a dropout.
var lmHyper = []string{"lr=1e-3", "min_lr=1e-4", "warmup=20", "weight_decay=0.1", "clip=1.0", "dropout=0.0"}

// ownDefaults reads -defaults: "shared" (false) gives train_lm.star's hyperparameters to both sides,
// "own" (true) leaves each side its own; "" is own with a budget and shared without.
func ownDefaults(d string, budget float64) (bool, error) {
	switch d {
	case "":
		return budget > 0, nil
	case "shared":
		return false, nil
	case "own":
		return true, nil
	}
	return false, fmt.Errorf("-defaults %q: want shared (train_lm.star's hyperparameters given to both sides) or own (each side's own)", d)
}

// lmParams is what both sides are given: lmSizes, with lmHyper unless own, each overridden by -set,
// then -set's in order.
func lmParams(ss sets, own bool) sets {
	defs := lmSizes
	if !own {
		defs = append(slices.Clone(lmSizes), lmHyper...)
	}
	out := sets{}
	for _, d := range defs {
		k, _, _ := strings.Cut(d, "=")
		if !slices.ContainsFunc(ss, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			out = append(out, d)
		}
	}
	return append(out, ss...)
}

// lmSeeds is the seeds of the reps: -seeds when given (comma-separated seeds and ranges a..b, each once),
// else reps seeds from first on.
func lmSeeds(list string, first, reps int) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		if reps < 1 {
			return nil, fmt.Errorf("-reps %d: want at least 1", reps)
		}
		out := make([]int, reps)
		for i := range out {
			out[i] = first + i
		}
		return out, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "..")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("-seeds %q: %q is not a seed (want a list such as 1,2,3 or 1..4)", list, f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("-seeds %q: %q is not a range a..b with a <= b", list, f)
			}
		}
		if b-a >= 10000 || len(out) > 10000 {
			return nil, fmt.Errorf("-seeds %q: more than 10000 seeds", list)
		}
		for s := a; s <= b; s++ {
			if slices.Contains(out, s) {
				return nil, fmt.Errorf("-seeds %q: seed %d twice (the runs are paired by seed)", list, s)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// lmPeerNames are the peer's names of script parameters that differ.
var lmPeerNames = map[string]string{"weight_decay": "wd"}

// lmArgs turns -set k=v into the peer's --k v (underscores as dashes: kv_heads is --kv-heads).
func lmArgs(ss sets) ([]string, error) {
	var out []string
	for _, s := range ss {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-set %q: want k=v", s)
		}
		if p, ok := lmPeerNames[k]; ok {
			k = p
		}
		out = append(out, "--"+strings.ReplaceAll(k, "_", "-"), v)
	}
	return out, nil
}

// runLMAnestar trains with binary bin and the LM script (modes fp16, fp32 as --fp32) on the same token
// files and seed, for -steps steps or with -budget its budget, and reads its metrics: the steps trained,
// the median ms and tokens/s of the steps after the first three (the peer leaves out as many) and the
// final validation loss. label tells its metrics file apart. It writes no checkpoint. With text (-text)
// it trains on that text instead, with a vocabulary of its own trained on the text's first 90 % (the
// script's val_frac 0.1 cuts where bench/peers/prep_lm.py does: the same validation bytes).
func runLMAnestar(c config, bin, script, label, tmp, timeV, mode string, params sets, seed int, text string) (result, error) {
	metrics := filepath.Join(tmp, fmt.Sprintf("lm-%s-%s-%d.jsonl", label, mode, seed))
	argv := []string{bin, "run", script, "--quiet"}
	if mode == "fp32" {
		argv = append(argv, "--fp32")
	}
	q := strconv.Quote // strings as Starlark literals
	set := []string{"data=" + q(c.train), "val_data=" + q(c.val)}
	if text != "" {
		set = []string{"data=" + q(text), "val_frac=0.1"}
	}
	set = append(set, "steps="+strconv.Itoa(c.steps), "seed="+strconv.Itoa(seed), "metrics="+q(metrics), `ckpt=""`, `best=""`, "eval_every=0")
	if c.budget > 0 {
		set = append(set, "budget="+strconv.FormatFloat(c.budget, 'g', -1, 64))
	}
	if c.tok != "" && text == "" {
		set = append(set, "tokenizer="+q(c.tok))
	}
	if p, ok := c.starts[seed]; ok {
		set = append(set, "init="+q(p+".bin"), "batches="+q(p+".batches.npy"))
	}
	for _, s := range append(set, params...) {
		argv = append(argv, "--set", s)
	}
	_, rss, err := timed(timeV, argv, nil)
	if err != nil {
		return result{}, err
	}
	f, err := os.Open(metrics)
	if err != nil {
		return result{}, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	var ms, tok []float64
	r := result{rssKB: rss, seed: seed}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			MS      *float64 `json:"ms"`
			TokS    float64  `json:"tokens_per_s"`
			ValLoss *float64 `json:"val_loss"`
			ValBPB  float64  `json:"val_bpb"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return result{}, fmt.Errorf("metrics %s: %w", metrics, err)
		}
		if rec.MS != nil {
			ms, tok = append(ms, *rec.MS), append(tok, rec.TokS)
		}
		if rec.ValLoss != nil {
			r.valLoss, r.valBPB = *rec.ValLoss, rec.ValBPB
		}
	}
	if len(ms) == 0 {
		return result{}, fmt.Errorf("metrics %s: no steps recorded", metrics)
	}
	if err := sc.Err(); err != nil {
		return result{}, fmt.Errorf("metrics %s: %w", metrics, err)
	}
	skip := min(3, len(ms)-1)
	r.ms, r.tokensS, r.steps = median(ms[skip:]), median(tok[skip:]), len(ms)
	return r, nil
}

// runLMPeer runs the LM peer script peer on the same token files and seed, for -steps steps or with
// -budget its --budget, with args (lmArgs) and torch threads.
func runLMPeer(c config, peer, timeV, threads string, args []string, seed int) (result, error) {
	argv := []string{c.python, peer, "--train", c.train, "--val", c.val, "--steps", strconv.Itoa(c.steps),
		"--threads", threads, "--seed", strconv.Itoa(seed)}
	if c.budget > 0 {
		argv = append(argv, "--budget", strconv.FormatFloat(c.budget, 'g', -1, 64))
	}
	if c.tok != "" {
		argv = append(argv, "--tokenizer", c.tok)
	}
	if p, ok := c.starts[seed]; ok {
		argv = append(argv, "--init", p+".bin", "--batches", p+".batches.npy")
	}
	argv = append(argv, args...)
	rec, rss, err := runPeer(timeV, argv)
	if err != nil {
		return result{}, err
	}
	r := result{ms: rec.MS, tokensS: rec.TokS, valLoss: rec.ValLoss, rssKB: rss, seed: seed, steps: rec.Steps}
	if rec.ValBPB != nil {
		r.valBPB = *rec.ValBPB
	}
	return r, nil
}

// reportLM prints each run's median speed and steps and the mean and spread of its final losses, the
// val_bpb of every seed, then, for every run after the first, its difference from the first paired by
// seed. It fails when a run lacks a seed another has (no pairs to make).
func reportLM(c config, own bool, runs []run, all map[string][]result) error {
	what := fmt.Sprintf("equal steps: %d steps per run", c.steps)
	if c.sameStart {
		what += ", every run of a seed from the same initial weights and batches (-same-start)"
	}
	if c.budget > 0 {
		what = fmt.Sprintf("equal wall time: %g s of training per run (compile and the final validation outside it), steps as each run fitted", c.budget)
	}
	hp := "train_lm.star's hyperparameters given to both (dropout 0 unless -set)"
	if own {
		hp = "each side on its own default hyperparameters (scripts/train_lm.star's, bench/peers/torch_lm.py's) but for -set"
	}
	fmt.Printf("\n%s; seeds %s; %s; given to both: %v\n", what, seedsString(c.seedList), hp, []string(lmParams(c.sets, own)))
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
	}
	best := peerBest(names, all)
	fmt.Printf("%-28s %7s %10s %10s %18s %18s %8s %8s\n", "run", "steps", "ms/step", "tok/s", "val_loss", "val_bpb", "peak MB", "vs peer")
	for _, r := range runs {
		rs := all[r.name]
		lm, ls := meanSD(rs, func(r result) float64 { return r.valLoss })
		bm, bs := meanSD(rs, func(r result) float64 { return r.valBPB })
		bpb := fmt.Sprintf("%10.4f ± %.4f", bm, bs)
		if c.tok == "" && !isTextRun(r.name) {
			bpb = fmt.Sprintf("%18s", "-")
		}
		ms := med(rs, func(r result) float64 { return r.ms })
		ratio := "-"
		if b := best[coreGroup(r.name)]; b.ms > 0 {
			ratio = fmt.Sprintf("%.2fx", ms/b.ms)
		}
		fmt.Printf("%-28s %7.0f %10.1f %10.0f %10.4f ± %.4f %s %8.0f %8s\n", r.name, med(rs, func(r result) float64 { return float64(r.steps) }),
			ms, med(rs, func(r result) float64 { return r.tokensS }), lm, ls, bpb, med(rs, func(r result) float64 { return r.rssKB })/1024, ratio)
	}
	printBest(best)
	for _, r := range runs {
		b := best[coreGroup(r.name)]
		if strings.HasPrefix(r.name, "pytorch ") || b.ms <= 0 {
			continue
		}
		x, err := pairedRatios(all[b.name], all[r.name])
		if err != nil {
			return fmt.Errorf("%s against %s: %w", r.name, b.name, err)
		}
		fmt.Printf("  %s against %s, seed by seed (each seed's runs one after the other): ms/step %s\n", r.name, b.name, x)
	}
	key, label := func(r result) float64 { return r.valBPB }, "val_bpb"
	if c.tok == "" {
		key, label = func(r result) float64 { return r.valLoss }, "val_loss"
	}
	fmt.Printf("%s by seed (steps trained):\n  %-6s", label, "seed")
	for _, n := range names {
		fmt.Printf(" %22s", n)
	}
	fmt.Println()
	for _, seed := range c.seedList {
		fmt.Printf("  %-6d", seed)
		for _, n := range names {
			cell := "-"
			for _, r := range all[n] {
				if r.seed == seed {
					cell = fmt.Sprintf("%.4f (%d)", key(r), r.steps)
				}
			}
			fmt.Printf(" %22s", cell)
		}
		fmt.Println()
	}
	if len(runs) < 2 {
		return nil
	}
	first := all[runs[0].name]
	fmt.Printf("paired by seed, each run minus %s: mean difference ± its standard error (the differences' sd; seeds where the run is lower); ratios of medians\n", runs[0].name)
	for _, r := range runs[1:] {
		rs := all[r.name]
		loss := "(its own vocabulary: val_loss not comparable)"
		if !isTextRun(r.name) {
			dl, err := pairedDiff(first, rs, func(r result) float64 { return r.valLoss })
			if err != nil {
				return fmt.Errorf("%s against %s: %w", r.name, runs[0].name, err)
			}
			loss = "val_loss " + dl.String()
		}
		bpb := ""
		if c.tok != "" {
			db, err := pairedDiff(first, rs, func(r result) float64 { return r.valBPB })
			if err != nil {
				return fmt.Errorf("%s against %s: %w", r.name, runs[0].name, err)
			}
			bpb = "  val_bpb " + db.String()
		}
		fmt.Printf("  %-20s %s%s  ms/step %.2fx  steps %.2fx\n", r.name, loss, bpb,
			med(rs, func(r result) float64 { return r.ms })/med(first, func(r result) float64 { return r.ms }),
			med(rs, func(r result) float64 { return float64(r.steps) })/max(med(first, func(r result) float64 { return float64(r.steps) }), 1))
	}
	return nil
}

// isTextRun reports whether the run named name trains on -text's own vocabulary (its losses are of
// other tokens: only bits per byte compare).
func isTextRun(name string) bool { return strings.HasSuffix(name, " text") }

// seedsString writes seeds as a list, a run of consecutive ones as a..b.
func seedsString(seeds []int) string {
	var parts []string
	for i := 0; i < len(seeds); {
		j := i
		for j+1 < len(seeds) && seeds[j+1] == seeds[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d..%d", seeds[i], seeds[j]))
		} else {
			parts = append(parts, strconv.Itoa(seeds[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// A diff is a paired difference of one figure: other minus base over the seeds both ran.
type diff struct {
	n        int     // pairs
	mean, sd float64 // of the differences (sd 0 for one pair)
	se       float64 // the mean's standard error, sd / sqrt(n)
	lower    int     // pairs where other is lower than base
}

func (d diff) String() string {
	return fmt.Sprintf("%+.4f ± %.4f (sd %.4f; lower in %d of %d)", d.mean, d.se, d.sd, d.lower, d.n)
}

// pairBySeed pairs other's results with base's by seed, in base's order. Every seed must be in both,
// once: a pair missing is an error, not a smaller sample.
func pairBySeed(base, other []result) ([][2]result, error) {
	if len(base) != len(other) {
		return nil, fmt.Errorf("%d results against %d: cannot pair them by seed", len(other), len(base))
	}
	by := map[int]result{}
	for _, r := range other {
		if _, dup := by[r.seed]; dup {
			return nil, fmt.Errorf("seed %d twice", r.seed)
		}
		by[r.seed] = r
	}
	var ps [][2]result
	for _, b := range base {
		o, ok := by[b.seed]
		if !ok {
			return nil, fmt.Errorf("seed %d has no pair", b.seed)
		}
		delete(by, b.seed)
		ps = append(ps, [2]result{b, o})
	}
	return ps, nil
}

// pairedDiff pairs other's results with base's by seed (pairBySeed) and returns the differences of f,
// other minus base.
func pairedDiff(base, other []result, f func(result) float64) (diff, error) {
	ps, err := pairBySeed(base, other)
	if err != nil {
		return diff{}, err
	}
	var d diff
	ds := make([]result, 0, len(ps))
	for _, p := range ps {
		x := f(p[1]) - f(p[0])
		ds = append(ds, result{valLoss: x})
		if x < 0 {
			d.lower++
		}
	}
	d.n = len(ds)
	d.mean, d.sd = meanSD(ds, func(r result) float64 { return r.valLoss })
	if d.n > 0 {
		d.se = d.sd / math.Sqrt(float64(d.n))
	}
	return d, nil
}

// A ratios is the per-seed ratios of one run's ms/step to another's: a seed's two runs ran one after
// the other, so a machine whose speed drifts between seeds (a neighbour's load, a peer that switches
// between two speeds) moves both alike, where a ratio of medians mixes the states.
type ratios struct {
	n           int
	med, lo, hi float64
}

func (r ratios) String() string {
	return fmt.Sprintf("median %.2fx (%.2f-%.2f over %d seeds)", r.med, r.lo, r.hi, r.n)
}

// pairedRatios pairs other's results with base's by seed (pairBySeed) and returns other's ms/step over
// base's, seed by seed.
func pairedRatios(base, other []result) (ratios, error) {
	ps, err := pairBySeed(base, other)
	if err != nil || len(ps) == 0 {
		return ratios{}, err
	}
	v := make([]float64, 0, len(ps))
	for _, p := range ps {
		if p[0].ms <= 0 {
			return ratios{}, fmt.Errorf("seed %d: no ms/step to divide by", p[0].seed)
		}
		v = append(v, p[1].ms/p[0].ms)
	}
	return ratios{n: len(v), med: median(v), lo: slices.Min(v), hi: slices.Max(v)}, nil
}

// meanSD is the mean and the sample standard deviation (0 for one value) of f over rs.
func meanSD(rs []result, f func(result) float64) (float64, float64) {
	if len(rs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, r := range rs {
		sum += f(r)
	}
	mean := sum / float64(len(rs))
	if len(rs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, r := range rs {
		ss += (f(r) - mean) * (f(r) - mean)
	}
	return mean, math.Sqrt(ss / float64(len(rs)-1))
}
