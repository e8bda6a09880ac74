package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/anestar/anestar/tokenizer"
)

// row is one shape's figures; a zero figure was not measured.
type row struct {
	s          shape
	paramsM    float64 // the model's parameters, millions (anestar check)
	flopsG     float64 // the model's FLOPs per training step, GFLOP (anestar check)
	peakT      float64 // the host's sgemm peak, TFLOP/s (anestar check)
	steps      int     // training steps per run
	ane, peer  trainRun
	peerThread string // the peer's best thread count
	gen, runc  genRun
}

// trainRun is one side's training figures (bench/compare's -json record).
type trainRun struct {
	MS      float64 `json:"ms"`
	TokensS float64 `json:"tokens_s"`
	RSSKB   float64 `json:"rss_kb"`
}

// genRun is one side's generation figures: medians over the runs. afterS is the rate after the first
// token, as run.c's "achieved tok/s" counts (run.c reports only that one: its tokensS is the same).
type genRun struct {
	tokensS, afterS, firstMS, rssKB float64
	tokens                          int // tokens generated (greedy stops at BOS)
}

// measure runs shape s: the check, the training of both sides, and generation on model (or a random
// model of s's shapes).
func measure(c config, s shape, model string) (row, error) {
	dir := filepath.Join(c.work, s.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return row{}, err
	}
	r := row{s: s, steps: s.steps}
	if c.steps > 0 {
		r.steps = c.steps
	}
	if !c.train {
		return r, generate(c, s, model, dir, &r)
	}
	train, val := filepath.Join(dir, "train.bin"), filepath.Join(dir, "val.bin")
	rng := rand.New(rand.NewPCG(1, uint64(s.vocab)))
	if err := randomTokens(train, s.batch*s.seq*(r.steps+2)+s.seq+2, s.vocab, rng); err != nil {
		return row{}, err
	}
	if err := randomTokens(val, 2*(s.seq+1), s.vocab, rng); err != nil {
		return row{}, err
	}
	if err := checkShape(c, s, train, val, &r); err != nil {
		return row{}, err
	}
	if err := trainBoth(c, s, train, val, dir, &r); err != nil {
		return row{}, err
	}
	if !c.gen {
		return r, nil
	}
	return r, generate(c, s, model, dir, &r)
}

// randomTokens writes n uniform random ids below vocab to path.
func randomTokens(path string, n, vocab int, rng *rand.Rand) error {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = rng.IntN(vocab)
	}
	return tokenizer.SaveTokens(path, ids, vocab)
}

// trainSets are train_lm.star's settings for s on the token files.
func trainSets(s shape, train, val string) []string {
	q := strconv.Quote
	return append([]string{"data=" + q(train), "val_data=" + q(val)}, s.sizes()...)
}

var (
	checkParams = regexp.MustCompile(`params ([0-9.]+)M`)
	checkFLOPs  = regexp.MustCompile(`\(([0-9.]+) GFLOP per step`)
	checkPeak   = regexp.MustCompile(`sgemm peak ([0-9.]+) TFLOP/s`)
)

// checkShape reads the model's parameters, FLOPs per step and the sgemm peak from anestar check.
func checkShape(c config, s shape, train, val string, r *row) error {
	argv := []string{c.anestar, "check", "scripts/train_lm.star"}
	for _, v := range trainSets(s, train, val) {
		argv = append(argv, "--set", v)
	}
	var out bytes.Buffer
	x := c.cmd(argv...)
	x.Stdout, x.Stderr = &out, &out
	if err := x.Run(); err != nil {
		return fmt.Errorf("anestar check: %w\n%s", err, out.String())
	}
	text := out.String()
	for _, f := range []struct {
		re  *regexp.Regexp
		dst *float64
	}{{checkParams, &r.paramsM}, {checkFLOPs, &r.flopsG}, {checkPeak, &r.peakT}} {
		m := f.re.FindStringSubmatch(text)
		if m == nil {
			return fmt.Errorf("anestar check printed no %q:\n%s", f.re, text)
		}
		*f.dst, _ = strconv.ParseFloat(m[1], 64)
	}
	return nil
}

// trainBoth runs bench/compare -mode lm at s for r.steps steps, seed 1, anestar in fp16 and the peer at
// each of -threads, and keeps anestar's figures and the peer's best.
func trainBoth(c config, s shape, train, val, dir string, r *row) error {
	results := filepath.Join(dir, "train.jsonl")
	argv := []string{c.compareBin, "-mode", "lm", "-anestar", c.anestar, "-python", c.python, "-train", train, "-val", val,
		"-modes", "fp16", "-steps", strconv.Itoa(r.steps), "-seeds", "1", "-threads", c.threads, "-json", results}
	for _, v := range s.sizes() {
		argv = append(argv, "-set", v)
	}
	if err := c.cmd(argv...).Run(); err != nil {
		return fmt.Errorf("bench/compare: %w", err)
	}
	recs, err := readResults(results)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		switch t, isPeer := strings.CutPrefix(rec.Run, "pytorch "); {
		case rec.Run == "anestar fp16":
			r.ane = rec.trainRun
		case isPeer && rec.MS > 0 && (r.peer.MS == 0 || rec.MS < r.peer.MS):
			r.peer, r.peerThread = rec.trainRun, strings.TrimSuffix(t, "t")
		}
	}
	if r.ane.MS == 0 {
		return fmt.Errorf("%s: no anestar fp16 result", results)
	}
	return nil
}

// result is a line of compare's -json file.
type result struct {
	Run string `json:"run"`
	trainRun
}

// readResults reads compare's -json file.
func readResults(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []result
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// generate runs sample.star and, with -runc, run.c on model (written at random for s when ""),
// alternately c.reps times each, greedy, c.prompt then c.genSteps tokens.
func generate(c config, s shape, model, dir string, r *row) error {
	if model == "" {
		model = filepath.Join(dir, "model.bin")
		argv := []string{c.anestar, "run", "scripts/testdata/llama2_random.star", "--set", "out=" + strconv.Quote(model)}
		for _, v := range []string{"dim=" + strconv.Itoa(s.dim), "hidden=" + strconv.Itoa(s.hidden), "layers=" + strconv.Itoa(s.layers),
			"heads=" + strconv.Itoa(s.heads), "kv_heads=" + strconv.Itoa(s.kvHeads), "vocab=" + strconv.Itoa(s.vocab), "max_seq_len=" + strconv.Itoa(s.seq)} {
			argv = append(argv, "--set", v)
		}
		if err := c.cmd(argv...).Run(); err != nil {
			return fmt.Errorf("a random model: %w", err)
		}
	}
	vocab := filepath.Join(dir, "ids.bin")
	if err := placeholderVocab(vocab, s.vocab); err != nil {
		return err
	}
	var ours, theirs []genRun
	for range c.reps {
		g, prompt, err := runSample(c, model, vocab)
		if err != nil {
			return err
		}
		ours = append(ours, g)
		if c.runc != "" {
			g, err := runRunC(c, model, vocab, prompt+c.genSteps)
			if err != nil {
				return err
			}
			theirs = append(theirs, g)
		}
	}
	r.gen, r.runc = medianGen(ours), medianGen(theirs)
	return nil
}

// placeholderVocab writes a llama2.c tokenizer of n pieces to path: <unk>, BOS and EOS, the 256 bytes
// as llama2's byte pieces <0xNN> (ids 3-258), a space (259), and "i " for every other id i.
func placeholderVocab(path string, n int) error {
	if n < 260 {
		return fmt.Errorf("vocab %d: the placeholder vocabulary needs 260 pieces (the bytes and a space)", n)
	}
	pieces, scores := make([]string, n), make([]float32, n)
	for i := range pieces {
		switch {
		case i < 3:
			pieces[i] = []string{"<unk>", "\n<s>\n", "\n</s>\n"}[i]
		case i < 259:
			pieces[i] = fmt.Sprintf("<0x%02X>", i-3)
		case i == 259:
			pieces[i] = " "
		default:
			pieces[i] = strconv.Itoa(i) + " "
		}
		if i >= 3 {
			scores[i] = -float32(i)
		}
	}
	t, err := tokenizer.New(pieces, scores)
	if err != nil {
		return err
	}
	return t.Save(path)
}

var (
	sampleSpeed = regexp.MustCompile(`generated (\d+) tokens in [0-9.]+ s: ([0-9.]+) tokens/s \(.*prompt (\d+) tokens(?:, the first token after ([0-9.]+) ms(?:, then ([0-9.]+) tokens/s)?)?`)
	runcSpeed   = regexp.MustCompile(`achieved tok/s: ([0-9.]+)`)
	maxRSS      = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
)

// runSample runs sample.star greedily on model and returns its figures and the prompt's tokens.
func runSample(c config, model, vocab string) (genRun, int, error) {
	q := strconv.Quote
	out, err := c.timed(c.anestar, "run", "scripts/sample.star", "--set", "model="+q(model), "--set", "tokenizer="+q(vocab),
		"--set", "prompt="+q(c.prompt), "--set", "steps="+strconv.Itoa(c.genSteps), "--set", "temperature=0")
	if err != nil {
		return genRun{}, 0, fmt.Errorf("sample.star: %w", err)
	}
	m := sampleSpeed.FindStringSubmatch(out)
	if m == nil {
		return genRun{}, 0, fmt.Errorf("sample.star reported no speed:\n%s", out)
	}
	var g genRun
	g.tokens, _ = strconv.Atoi(m[1])
	g.tokensS, _ = strconv.ParseFloat(m[2], 64)
	prompt, _ := strconv.Atoi(m[3])
	g.firstMS, _ = strconv.ParseFloat(m[4], 64)
	g.afterS, _ = strconv.ParseFloat(m[5], 64)
	g.rssKB = rss(out)
	return g, prompt, nil
}

// runRunC runs run.c greedily on model for steps positions (the prompt's included, as run.c counts).
func runRunC(c config, model, vocab string, steps int) (genRun, error) {
	out, err := c.timed(c.runc, model, "-z", vocab, "-t", "0", "-n", strconv.Itoa(steps), "-i", c.prompt)
	if err != nil {
		return genRun{}, fmt.Errorf("run.c: %w", err)
	}
	m := runcSpeed.FindStringSubmatch(out)
	if m == nil {
		return genRun{}, fmt.Errorf("run.c reported no speed (it stops at BOS; it reports none for one token):\n%s", out)
	}
	var g genRun
	g.tokensS, _ = strconv.ParseFloat(m[1], 64)
	g.afterS = g.tokensS
	g.rssKB = rss(out)
	return g, nil
}

// timed runs argv under /usr/bin/time -v where it exists and returns everything it printed but the
// generated text's standard output lines (kept from the log).
func (c config) timed(argv ...string) (string, error) {
	if c.timeV != "" {
		argv = append([]string{c.timeV, "-v"}, argv...)
	}
	var stderr bytes.Buffer
	x := c.cmd(argv...)
	x.Stdout, x.Stderr = &bytes.Buffer{}, &stderr
	err := x.Run()
	fmt.Fprint(c.log, lastLines(stderr.String(), 3))
	if err != nil {
		return "", fmt.Errorf("%w\n%s", err, stderr.String())
	}
	return stderr.String(), nil
}

// rss is the peak resident set /usr/bin/time -v reported in out, KB (0 without).
func rss(out string) float64 {
	m := maxRSS.FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// lastLines is the text's first line matching a speed report, or its last n lines.
func lastLines(s string, n int) string {
	for _, re := range []*regexp.Regexp{sampleSpeed, runcSpeed} {
		if m := re.FindString(s); m != "" {
			return m + "\n"
		}
	}
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n") + "\n"
}

// medianGen is the per-figure median of gs (zero for none).
func medianGen(gs []genRun) genRun {
	if len(gs) == 0 {
		return genRun{}
	}
	pick := func(f func(genRun) float64) float64 {
		v := make([]float64, len(gs))
		for i, g := range gs {
			v[i] = f(g)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return genRun{
		tokensS: pick(func(g genRun) float64 { return g.tokensS }),
		afterS:  pick(func(g genRun) float64 { return g.afterS }),
		firstMS: pick(func(g genRun) float64 { return g.firstMS }),
		rssKB:   pick(func(g genRun) float64 { return g.rssKB }),
		tokens:  int(pick(func(g genRun) float64 { return float64(g.tokens) })),
	}
}
