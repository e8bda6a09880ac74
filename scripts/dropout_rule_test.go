package scripts

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ckpt"
)

// dropoutLine is the line train_lm.star prints when it chooses the dropout by DROPOUT_PASSES.
var dropoutLine = regexp.MustCompile(`\[dropout ([0-9.]+): the run makes ([0-9.]+) passes over its (\d+) training tokens`)

// ruleDropout is DROPOUT_PASSES as train_lm.star's header gives it, for the test's own reckoning.
func ruleDropout(passes float64) float64 {
	switch {
	case passes >= 8:
		return 0.2
	case passes >= 5.5:
		return 0.1
	}
	return 0
}

// TestTrainLMDropoutRule: without a dropout given, the run takes the table's dropout for the passes it
// makes over its training tokens (steps x batch x seq over them; with a budget the steps the first 20
// steps' rate fits), records it in the checkpoint and keeps it when resumed for longer; a dropout given
// is taken as it is.
func TestTrainLMDropoutRule(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "lm.safetensors")
	p := lmSmall(dir, "batch", "8", "steps", "80", "eval_every", "0", "ckpt_every", "1000", "best", `""`)
	_, out := mustRunLM(t, p, false)
	m := dropoutLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no dropout line:\n%s", out)
	}
	drop, _ := strconv.ParseFloat(m[1], 64)
	passes, _ := strconv.ParseFloat(m[2], 64)
	tokens, _ := strconv.Atoi(m[3])
	if want := 80.0 * 8 * 32 / float64(tokens); passes < want-0.05 || passes > want+0.05 {
		t.Errorf("passes %g, want 80 steps x 256 tokens over %d = %.2f", passes, tokens, want)
	}
	if drop != 0.1 || ruleDropout(passes) != drop {
		t.Errorf("dropout %g for %g passes; want 0.1 (the table's)", drop, passes)
	}
	meta := func() float64 {
		t.Helper()
		mt, err := ckpt.LoadMeta(ck)
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseFloat(strings.Trim(mt["lm/dropout"], `"`), 64)
		if err != nil {
			t.Fatalf("lm/dropout %q: %v", mt["lm/dropout"], err)
		}
		return v
	}
	if got := meta(); got != 0.1 {
		t.Errorf("the checkpoint records dropout %g, want 0.1", got)
	}
	// Resumed for 150 steps in all (10.7 passes: the table would give 0.2 for a fresh run of 150): it keeps 0.1.
	p["steps"] = "150"
	_, out = mustRunLM(t, p, true)
	if dropoutLine.MatchString(out) {
		t.Errorf("a resumed run chose its dropout again:\n%s", out)
	}
	if got := meta(); got != 0.1 {
		t.Errorf("after resuming the checkpoint records dropout %g, want the run's 0.1", got)
	}
	// A few steps: no dropout; a dropout given: no rule.
	for _, c := range []struct {
		kv   []string
		line bool
		want float64
	}{
		{[]string{"steps", "4"}, true, 0},
		{[]string{"steps", "4", "dropout", "0.3"}, false, 0.3},
	} {
		d := t.TempDir()
		ck = filepath.Join(d, "lm.safetensors")
		_, out := mustRunLM(t, lmSmall(d, append([]string{"eval_every", "0", "best", `""`}, c.kv...)...), false)
		if got := dropoutLine.MatchString(out); got != c.line {
			t.Errorf("%v: dropout line printed %v, want %v:\n%s", c.kv, got, c.line, out)
		}
		if got := meta(); got != c.want {
			t.Errorf("%v: dropout %g, want %g", c.kv, got, c.want)
		}
	}
}

// TestTrainLMDropoutRuleBudget: a budget run without a dropout given trains its first 20 steps without,
// then takes the table's dropout for the steps its rate fits in the budget.
func TestTrainLMDropoutRuleBudget(t *testing.T) {
	dir := t.TempDir()
	_, out := mustRunLM(t, lmSmall(dir, "batch", "8", "budget", "4", "eval_every", "0", "best", `""`), false)
	if !strings.Contains(out, "[dropout: none for the first 20 steps") {
		t.Errorf("no note of the probe:\n%s", out)
	}
	m := regexp.MustCompile(`\[dropout ([0-9.]+): the run makes ([0-9.]+) passes over its (\d+) training tokens, (\d+) steps fitting`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no dropout chosen after the probe:\n%s", out)
	}
	drop, _ := strconv.ParseFloat(m[1], 64)
	shown, _ := strconv.ParseFloat(m[2], 64)
	tokens, _ := strconv.Atoi(m[3])
	steps, _ := strconv.Atoi(m[4])
	// the passes themselves (the line rounds them to a tenth: 5.46 shows as 5.5, below the table's 5.5)
	passes := float64(steps*8*32) / float64(tokens)
	if math.Abs(passes-shown) > 0.05+1e-9 {
		t.Errorf("the line shows %g passes; %d steps of 8 x 32 tokens over %d make %g", shown, steps, tokens, passes)
	}
	if ruleDropout(passes) != drop {
		t.Errorf("dropout %g for %g passes; the table gives %g", drop, passes, ruleDropout(passes))
	}
}
