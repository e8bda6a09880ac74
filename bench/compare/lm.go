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
// Every run takes the same arguments; rep i runs with seed -seed+i-1 on every side, so that the paired
// differences of the validation loss measure one implementation against another, not two draws.
//
// Another trainer joins as one more run: a func(rep) that trains at the same settings and seed and
// returns its result (ms, tokensS, valLoss, valBPB); anestar's scripts/train_lm.star is meant to join so.
func compareLM(c config) error {
	if c.train == "" || c.val == "" {
		return fmt.Errorf("-mode lm needs -train and -val token files (uint16 .bin; bench/peers/torch_lm.py says how they are read)")
	}
	if c.threads == "" {
		c.threads = "1"
	}
	tmp, modes, err := setup(&c)
	defer os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	if c.script == layerScript {
		c.script = lmScript
	}
	params := lmParams(c.sets)
	args, err := lmArgs(params)
	if err != nil {
		return err
	}
	tv := timeV()
	var runs []run
	for _, m := range modes {
		runs = append(runs, run{"anestar " + m, func(rep int) (result, error) {
			return runLMAnestar(c, c.anestar, c.script, "anestar", tmp, tv, m, params, c.seed+rep)
		}})
		if c.base != "" {
			script := c.script
			if c.baseScript != "" {
				script = c.baseScript
			}
			runs = append(runs, run{"base " + m, func(rep int) (result, error) {
				return runLMAnestar(c, c.base, script, "base", tmp, tv, m, params, c.seed+rep)
			}})
		}
	}
	for _, p := range peerScripts(c, lmPeer) {
		for _, t := range strings.Split(c.threads, ",") {
			t := strings.TrimSpace(t)
			runs = append(runs, run{p.label + " " + t + "t", func(rep int) (result, error) { return runLMPeer(c, p.path, tv, t, args, c.seed+rep) }})
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("nothing to run")
	}
	runs = withCores(c.cores, runs)
	all, err := alternate(c.reps, runs, func(r result) string {
		return fmt.Sprintf("%8.1f ms/step %9.0f tok/s  val_loss %.4f  val_bpb %.4f  rss %5.0f MB", r.ms, r.tokensS, r.valLoss, r.valBPB, r.rssKB/1024)
	})
	if err != nil {
		return err
	}
	reportLM(c, runs, all)
	return nil
}

// lmDefaults are train_lm.star's defaults of the settings both sides take, given to both (the peer's
// own defaults differ), so that the same model trains on each side unless -set says otherwise.
var lmDefaults = []string{"vocab=1024", "dim=256", "layers=4", "heads=4", "kv_heads=4", "hidden=704", "seq=128",
	"batch=8", "lr=1.5e-3", "min_lr=1.5e-4", "warmup=100"}

// lmParams is lmDefaults overridden by -set.
func lmParams(ss sets) sets {
	out := sets{}
	for _, d := range lmDefaults {
		k, _, _ := strings.Cut(d, "=")
		if !slices.ContainsFunc(ss, func(s string) bool { return strings.HasPrefix(s, k+"=") }) {
			out = append(out, d)
		}
	}
	return append(out, ss...)
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
// files and seed, and reads its metrics: the median ms and tokens/s of the steps after the first three
// (the peer leaves out as many) and the final validation loss. label tells its metrics file apart.
func runLMAnestar(c config, bin, script, label, tmp, timeV, mode string, params sets, seed int) (result, error) {
	metrics := filepath.Join(tmp, fmt.Sprintf("lm-%s-%s-%d.jsonl", label, mode, seed))
	argv := []string{bin, "run", script, "--quiet"}
	if mode == "fp32" {
		argv = append(argv, "--fp32")
	}
	q := strconv.Quote // strings as Starlark literals
	set := []string{"data=" + q(c.train), "val_data=" + q(c.val), "steps=" + strconv.Itoa(c.steps),
		"seed=" + strconv.Itoa(seed), "metrics=" + q(metrics), `ckpt=""`, "eval_every=0",
		"dropout=0.0"} // the peer has no dropout: the same model trains on both sides
	if c.tok != "" {
		set = append(set, "tokenizer="+q(c.tok))
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
		return result{}, fmt.Errorf("metrics: %v", err)
	}
	defer f.Close()
	var ms, tok []float64
	r := result{rssKB: rss}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			MS      *float64 `json:"ms"`
			TokS    float64  `json:"tokens_per_s"`
			ValLoss *float64 `json:"val_loss"`
			ValBPB  float64  `json:"val_bpb"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return result{}, fmt.Errorf("metrics %s: %v", metrics, err)
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
	skip := min(3, len(ms)-1)
	r.ms, r.tokensS = median(ms[skip:]), median(tok[skip:])
	return r, nil
}

func runLMPeer(c config, peer, timeV, threads string, args []string, seed int) (result, error) {
	argv := []string{c.python, peer, "--train", c.train, "--val", c.val, "--steps", strconv.Itoa(c.steps),
		"--threads", threads, "--seed", strconv.Itoa(seed)}
	if c.tok != "" {
		argv = append(argv, "--tokenizer", c.tok)
	}
	argv = append(argv, args...)
	rec, rss, err := runPeer(timeV, argv)
	if err != nil {
		return result{}, err
	}
	r := result{ms: rec.MS, tokensS: rec.TokS, valLoss: rec.ValLoss, rssKB: rss}
	if rec.ValBPB != nil {
		r.valBPB = *rec.ValBPB
	}
	return r, nil
}

// reportLM prints each run's median speed and the mean and spread of its final losses, then, for every
// run after the first, its paired difference from the first (same seeds).
func reportLM(c config, runs []run, all map[string][]result) {
	fmt.Printf("\n%d reps (seeds %d..%d), %d steps each, %v\n", c.reps, c.seed, c.seed+c.reps-1, c.steps, []string(c.sets))
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
	}
	best := peerBest(names, all)
	fmt.Printf("%-28s %10s %10s %18s %18s %8s %8s\n", "run", "ms/step", "tok/s", "val_loss", "val_bpb", "peak MB", "vs peer")
	for _, r := range runs {
		rs := all[r.name]
		lm, ls := meanSD(rs, func(r result) float64 { return r.valLoss })
		bm, bs := meanSD(rs, func(r result) float64 { return r.valBPB })
		bpb := fmt.Sprintf("%10.4f ± %.4f", bm, bs)
		if c.tok == "" {
			bpb = fmt.Sprintf("%18s", "-")
		}
		ms := med(rs, func(r result) float64 { return r.ms })
		ratio := "-"
		if b := best[coreGroup(r.name)]; b.ms > 0 {
			ratio = fmt.Sprintf("%.2fx", ms/b.ms)
		}
		fmt.Printf("%-28s %10.1f %10.0f %10.4f ± %.4f %s %8.0f %8s\n", r.name, ms, med(rs, func(r result) float64 { return r.tokensS }),
			lm, ls, bpb, med(rs, func(r result) float64 { return r.rssKB })/1024, ratio)
	}
	printBest(best)
	if len(runs) < 2 {
		return
	}
	first := all[runs[0].name]
	fmt.Printf("paired by seed, against %s (mean difference ± its standard error; ms/step ratio of medians):\n", runs[0].name)
	for _, r := range runs[1:] {
		rs := all[r.name]
		d := make([]result, len(rs))
		for i := range rs {
			d[i] = result{valLoss: rs[i].valLoss - first[i].valLoss, valBPB: rs[i].valBPB - first[i].valBPB}
		}
		lm, ls := meanSD(d, func(r result) float64 { return r.valLoss })
		bm, bs := meanSD(d, func(r result) float64 { return r.valBPB })
		n := math.Sqrt(float64(len(d)))
		bpb := fmt.Sprintf("  val_bpb %+.4f ± %.4f", bm, bs/n)
		if c.tok == "" {
			bpb = ""
		}
		fmt.Printf("  %-20s val_loss %+.4f ± %.4f%s  ms/step %.2fx\n", r.name, lm, ls/n, bpb,
			med(rs, func(r result) float64 { return r.ms })/med(first, func(r result) float64 { return r.ms }))
	}
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
