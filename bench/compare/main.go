// Command compare measures anestar's single-layer training (scripts/train_layer.star on the emulator,
// in fp16 and fp32 numerics) side by side with the PyTorch peer (the same layer, shapes, loss and
// optimizer cadence in PyTorch eager mode, at 1 and 2 threads) on the same machine, in one run.
//
// The runs alternate (anestar fp16, anestar fp32, peer 1 thread, peer 2 threads, then again), so that
// load from other work on a shared machine falls on all of them alike; each is repeated -reps times and
// the report gives the median ms/step of each, the ratios to the peer's best thread setting, the
// compile time per batch and the peak resident memory (from /usr/bin/time -v where it exists).
//
// anestar's ms/step is the median of the per-step times in the script's metrics file (--set
// metrics=PATH; compile excluded), and its "Avg train" line of the efficiency report is shown beside
// it. The peer is skipped, with a message, where PyTorch (or the peer script) is absent.
//
//	go run ./bench/compare                                  reference sizes (dim 768, seq 512)
//	go run ./bench/compare -reps 5 -steps 20
//	go run ./bench/compare -base /tmp/anestar-old          before/after a change, interleaved
//	go run ./bench/compare -base /tmp/old/anestar -base-script /tmp/old/scripts/train_layer.star
//	go run ./bench/compare -set dim=256 -set hidden=512 -set heads=4 -set seq=128   a quick check
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	reps, steps, accum int
	sets               sets
	anestar, script    string
	base, baseScript   string
	peer, python       string
	threads            string
	modes              string
}

// result is one run's figures.
type result struct {
	ms        float64 // median ms/step
	avg       float64 // the report's Avg train, anestar only
	compileMS float64 // the report's Avg compile per batch, anestar only
	rssKB     float64 // peak resident set, 0 when unknown
}

func main() {
	var c config
	flag.IntVar(&c.reps, "reps", 3, "repetitions of each run")
	flag.IntVar(&c.steps, "steps", 20, "measured training steps per run")
	flag.IntVar(&c.accum, "accum", 10, "steps per optimizer update (both sides)")
	flag.Var(&c.sets, "set", "a script parameter `k=v` (dim, hidden, heads, seq are passed to the peer too); repeatable")
	flag.StringVar(&c.anestar, "anestar", "", "the anestar binary (default: go build ./cmd/anestar into a temporary directory)")
	flag.StringVar(&c.base, "base", "", "a second anestar binary (say, built before a change) run alternately with the first, as \"base\"")
	flag.StringVar(&c.script, "script", "scripts/train_layer.star", "the training script")
	flag.StringVar(&c.baseScript, "base-script", "", "the script the -base binary runs (default -script): the script as it was when that binary was built")
	flag.StringVar(&c.peer, "peer", "../shared/peers/torch_layer.py", "the PyTorch peer script")
	flag.StringVar(&c.python, "python", "/usr/bin/python3", "the Python that has PyTorch")
	flag.StringVar(&c.threads, "threads", "1,2", "peer thread counts")
	flag.StringVar(&c.modes, "modes", "fp16,fp32", "anestar numerics to run")
	flag.Parse()
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	tmp, err := os.MkdirTemp("", "anestar-compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if c.anestar == "" {
		c.anestar = filepath.Join(tmp, "anestar")
		fmt.Println("building ./cmd/anestar ...")
		cmd := exec.Command("go", "build", "-o", c.anestar, "./cmd/anestar")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %v", err)
		}
	}
	params := map[string]string{}
	for _, s := range c.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("-set %q: want k=v", s)
		}
		params[k] = v
	}
	timeV := "/usr/bin/time"
	if _, err := os.Stat(timeV); err != nil {
		fmt.Println("note: /usr/bin/time not found (apt-get install time): peak memory not measured")
		timeV = ""
	}
	var names []string
	runs := map[string]func(rep int) (result, error){}
	for _, m := range strings.Split(c.modes, ",") {
		m := strings.TrimSpace(m)
		name := "anestar " + m
		names = append(names, name)
		runs[name] = func(rep int) (result, error) { return runAnestar(c, c.anestar, c.script, tmp, timeV, m, params, rep) }
		if c.base != "" {
			name := "base " + m
			names = append(names, name)
			runs[name] = func(rep int) (result, error) {
				script := c.script
				if c.baseScript != "" {
					script = c.baseScript
				}
				return runAnestar(c, c.base, script, tmp, timeV, m, params, rep)
			}
		}
	}
	peerOK, why := peerAvailable(c)
	if !peerOK {
		fmt.Println("skipping the PyTorch peer:", why)
	} else {
		for _, t := range strings.Split(c.threads, ",") {
			t := strings.TrimSpace(t)
			name := "pytorch " + t + "t"
			names = append(names, name)
			runs[name] = func(int) (result, error) { return runPeer(c, timeV, t, params) }
		}
	}
	all := map[string][]result{}
	for rep := range c.reps {
		for _, n := range names {
			r, err := runs[n](rep)
			if err != nil {
				return fmt.Errorf("%s: %v", n, err)
			}
			fmt.Printf("  rep %d  %-16s %8.1f ms/step  rss %6.0f MB\n", rep+1, n, r.ms, r.rssKB/1024)
			all[n] = append(all[n], r)
		}
	}
	report(c, names, all)
	return nil
}

// peerAvailable reports whether the peer script exists and its Python imports torch.
func peerAvailable(c config) (bool, string) {
	if _, err := os.Stat(c.peer); err != nil {
		return false, fmt.Sprintf("no peer script at %s (-peer)", c.peer)
	}
	if out, err := exec.Command(c.python, "-c", "import torch").CombinedOutput(); err != nil {
		return false, fmt.Sprintf("%s cannot import torch (apt-get install python3-torch): %v %s", c.python, err, lastLine(out))
	}
	return true, ""
}

// timed runs argv, under /usr/bin/time -v when timeV is set, and returns its output and peak RSS in KB.
func timed(timeV string, argv []string, env []string) (string, float64, error) {
	if timeV != "" {
		argv = append([]string{timeV, "-v"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	s := out.String()
	if err != nil {
		return s, 0, fmt.Errorf("%v: %v\n%s", strings.Join(argv, " "), err, tail(s, 20))
	}
	var rss float64
	if m := regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`).FindStringSubmatch(s); m != nil {
		rss, _ = strconv.ParseFloat(m[1], 64)
	}
	return s, rss, nil
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
		return 0, fmt.Errorf("metrics: %v (does the script take --set metrics=PATH?)", err)
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
			return 0, fmt.Errorf("metrics %s: %v", path, err)
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

func runPeer(c config, timeV, threads string, params map[string]string) (result, error) {
	argv := []string{c.python, c.peer, "--steps", strconv.Itoa(c.steps), "--accum", strconv.Itoa(c.accum), "--threads", threads}
	for _, k := range []string{"dim", "hidden", "heads", "seq"} {
		if v, ok := params[k]; ok {
			argv = append(argv, "--"+k, v)
		}
	}
	out, rss, err := timed(timeV, argv, nil)
	if err != nil {
		return result{}, err
	}
	for _, line := range strings.Split(out, "\n") {
		var rec struct {
			Peer string  `json:"peer"`
			MS   float64 `json:"ms_per_step"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Peer != "" {
			return result{ms: rec.MS, rssKB: rss}, nil
		}
	}
	return result{}, fmt.Errorf("no JSON result line in the peer's output:\n%s", tail(out, 10))
}

func report(c config, names []string, all map[string][]result) {
	fmt.Printf("\nmedians of %d runs, %d steps each (accum %d), sizes %v\n", c.reps, c.steps, c.accum, []string(c.sets))
	best, bestName := 0.0, ""
	for _, n := range names {
		if strings.HasPrefix(n, "pytorch") {
			if m := med(all[n], func(r result) float64 { return r.ms }); best == 0 || m < best {
				best, bestName = m, n
			}
		}
	}
	fmt.Printf("%-16s %10s %10s %12s %10s %10s\n", "run", "ms/step", "avg train", "compile/bat", "peak MB", "vs peer")
	for _, n := range names {
		rs := all[n]
		ms := med(rs, func(r result) float64 { return r.ms })
		ratio := "-"
		if best > 0 {
			ratio = fmt.Sprintf("%.2fx", ms/best)
		}
		fmt.Printf("%-16s %10.1f %10s %12s %10.0f %10s\n", n, ms,
			opt(med(rs, func(r result) float64 { return r.avg })),
			opt(med(rs, func(r result) float64 { return r.compileMS })),
			med(rs, func(r result) float64 { return r.rssKB })/1024, ratio)
	}
	if bestName != "" {
		fmt.Printf("ratios are to the peer's best thread setting (%s, %.1f ms/step)\n", bestName, best)
	}
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
