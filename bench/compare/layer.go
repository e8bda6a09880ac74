package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// setup makes the run's temporary directory (the caller removes it) and returns it with the list of
// -modes; when there are any and -anestar is unset, it builds ./cmd/anestar there and sets c.anestar.
func setup(c *config) (tmp string, modes []string, err error) {
	if tmp, err = os.MkdirTemp("", "anestar-compare"); err != nil {
		return "", nil, err
	}
	for _, m := range strings.Split(c.modes, ",") {
		if m = strings.TrimSpace(m); m != "" {
			modes = append(modes, m)
		}
	}
	if c.anestar == "" && len(modes) > 0 {
		c.anestar = filepath.Join(tmp, "anestar")
		fmt.Println("building ./cmd/anestar ...")
		cmd := exec.Command("go", "build", "-o", c.anestar, "./cmd/anestar")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return tmp, nil, fmt.Errorf("go build: %w", err)
		}
	}
	return tmp, modes, nil
}

// compareLayer is -mode layer: scripts/train_layer.star (or -script) against the layer peer.
func compareLayer(c config) error {
	tmp, modes, err := setup(&c)
	defer os.RemoveAll(tmp)
	if err != nil {
		return err
	}
	if c.peer == "" {
		c.peer = layerPeer
	}
	if err := snapshotAll(&c, tmp); err != nil {
		return err
	}
	if c.threads == "" {
		c.threads = "1,2"
	}
	params := map[string]string{}
	for _, s := range c.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("-set %q: want k=v", s)
		}
		params[k] = v
	}
	tv := timeV()
	var runs []run
	for _, m := range modes {
		runs = append(runs, run{"anestar " + m, func(rep int) (result, error) { return runAnestar(c, c.anestar, c.script, tmp, tv, m, params, rep) }})
		if c.base != "" {
			script := c.script
			if c.baseScript != "" {
				script = c.baseScript
			}
			runs = append(runs, run{"base " + m, func(rep int) (result, error) { return runAnestar(c, c.base, script, tmp, tv, m, params, rep) }})
		}
	}
	for _, p := range peerScripts(c, layerPeer) {
		for _, t := range strings.Split(c.threads, ",") {
			t := strings.TrimSpace(t)
			runs = append(runs, run{p.label + " " + t + "t", func(int) (result, error) { return runLayerPeer(c, p.path, tv, t, params) }})
		}
	}
	runs = withCores(c.cores, runs)
	all, err := alternate(c.reps, runs, func(r result) string {
		return fmt.Sprintf("%8.1f ms/step  rss %6.0f MB", r.ms, r.rssKB/1024)
	})
	if err != nil {
		return err
	}
	report(c, runs, all)
	return nil
}

func runAnestar(c config, bin, script, tmp, timeV, mode string, params map[string]string, rep int) (result, error) {
	tag := fmt.Sprintf("%s-%s-%d", filepath.Base(bin), mode, rep)
	metrics := filepath.Join(tmp, "metrics-"+tag+".jsonl")
	ck := filepath.Join(tmp, "ckpt-"+tag+".safetensors")
	argv := []string{bin, "run", script}
	if mode == "fp32" {
		argv = append(argv, "--fp32")
	}
	set := map[string]string{"steps": strconv.Itoa(c.steps), "accum": strconv.Itoa(c.accum), "metrics": metrics, "ckpt": ck}
	for k, v := range params {
		set[k] = v
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		argv = append(argv, "--set", k+"="+set[k])
	}
	out, rss, err := timed(timeV, argv, nil)
	if err != nil {
		return result{}, err
	}
	ms, err := metricsMedian(metrics, c.accum)
	if err != nil {
		return result{}, err
	}
	r := result{ms: ms, rssKB: rss}
	if m := regexp.MustCompile(`Avg train:\s+([0-9.]+) ms/step`).FindStringSubmatch(out); m != nil {
		r.avg, _ = strconv.ParseFloat(m[1], 64)
	}
	if m := regexp.MustCompile(`Avg compile:\s+([0-9.]+) ms`).FindStringSubmatch(out); m != nil {
		r.compileMS, _ = strconv.ParseFloat(m[1], 64)
	}
	return r, nil
}

// metricsMedian is the median "ms" of the metrics file's steps, leaving out the first step of each
// batch of accum (it follows a recompile and pays for first touches of new buffers).
func metricsMedian(path string, accum int) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w (does the script take --set metrics=PATH?)", err)
	}
	defer f.Close()
	var all, rest []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Step int     `json:"step"`
			MS   float64 `json:"ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return 0, fmt.Errorf("metrics %s: %w", path, err)
		}
		all = append(all, rec.MS)
		if accum <= 1 || rec.Step%accum != 0 {
			rest = append(rest, rec.MS)
		}
	}
	if len(rest) == 0 {
		rest = all
	}
	if len(rest) == 0 {
		return 0, errors.New("metrics: no steps recorded")
	}
	return median(rest), nil
}

func runLayerPeer(c config, peer, timeV, threads string, params map[string]string) (result, error) {
	argv := []string{c.python, peer, "--steps", strconv.Itoa(c.steps), "--accum", strconv.Itoa(c.accum), "--threads", threads}
	for _, k := range []string{"dim", "hidden", "heads", "seq"} {
		if v, ok := params[k]; ok {
			argv = append(argv, "--"+k, v)
		}
	}
	rec, rss, err := runPeer(timeV, argv)
	if err != nil {
		return result{}, err
	}
	return result{ms: rec.MS, rssKB: rss}, nil
}

func report(c config, runs []run, all map[string][]result) {
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
	}
	fmt.Printf("\nmedians of %d runs, %d steps each (accum %d), sizes %v\n", c.reps, c.steps, c.accum, []string(c.sets))
	best := peerBest(names, all)
	fmt.Printf("%-28s %10s %10s %12s %10s %10s\n", "run", "ms/step", "avg train", "compile/bat", "peak MB", "vs peer")
	for _, n := range names {
		rs := all[n]
		ms := med(rs, func(r result) float64 { return r.ms })
		ratio := "-"
		if b := best[coreGroup(n)]; b.ms > 0 {
			ratio = fmt.Sprintf("%.2fx", ms/b.ms)
		}
		fmt.Printf("%-28s %10.1f %10s %12s %10.0f %10s\n", n, ms,
			opt(med(rs, func(r result) float64 { return r.avg })),
			opt(med(rs, func(r result) float64 { return r.compileMS })),
			med(rs, func(r result) float64 { return r.rssKB })/1024, ratio)
	}
	printBest(best)
}
