package main

import (
	"fmt"
	"math"
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
	args, err := lmArgs(c.sets)
	if err != nil {
		return err
	}
	tv := timeV()
	var runs []run
	for _, p := range peerScripts(c, lmPeer) {
		for _, t := range strings.Split(c.threads, ",") {
			t := strings.TrimSpace(t)
			runs = append(runs, run{p.label + " " + t + "t", func(rep int) (result, error) { return runLMPeer(c, p.path, tv, t, args, c.seed+rep) }})
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("nothing to run")
	}
	all, err := alternate(c.reps, runs, func(r result) string {
		return fmt.Sprintf("%8.1f ms/step %9.0f tok/s  val_loss %.4f  val_bpb %.4f  rss %5.0f MB", r.ms, r.tokensS, r.valLoss, r.valBPB, r.rssKB/1024)
	})
	if err != nil {
		return err
	}
	reportLM(c, runs, all)
	return nil
}

// lmArgs turns -set k=v into the peer's --k v (underscores as dashes: kv_heads is --kv-heads).
func lmArgs(ss sets) ([]string, error) {
	var out []string
	for _, s := range ss {
		k, v, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-set %q: want k=v", s)
		}
		out = append(out, "--"+strings.ReplaceAll(k, "_", "-"), v)
	}
	return out, nil
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
	fmt.Printf("%-20s %10s %10s %18s %18s %8s\n", "run", "ms/step", "tok/s", "val_loss", "val_bpb", "peak MB")
	for _, r := range runs {
		rs := all[r.name]
		lm, ls := meanSD(rs, func(r result) float64 { return r.valLoss })
		bm, bs := meanSD(rs, func(r result) float64 { return r.valBPB })
		bpb := fmt.Sprintf("%10.4f ± %.4f", bm, bs)
		if c.tok == "" {
			bpb = fmt.Sprintf("%18s", "-")
		}
		fmt.Printf("%-20s %10.1f %10.0f %10.4f ± %.4f %s %8.0f\n", r.name,
			med(rs, func(r result) float64 { return r.ms }), med(rs, func(r result) float64 { return r.tokensS }),
			lm, ls, bpb, med(rs, func(r result) float64 { return r.rssKB })/1024)
	}
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
