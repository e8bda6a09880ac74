package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLMSeeds(t *testing.T) {
	for _, c := range []struct {
		list        string
		first, reps int
		want        []int
	}{
		{"", 1, 3, []int{1, 2, 3}},
		{"", 7, 1, []int{7}},
		{"4", 1, 3, []int{4}},
		{"3, 1,2", 1, 3, []int{3, 1, 2}},
		{"1..4", 9, 9, []int{1, 2, 3, 4}},
		{"10,1..2", 0, 0, []int{10, 1, 2}},
		{"-1..1", 0, 0, []int{-1, 0, 1}},
	} {
		got, err := lmSeeds(c.list, c.first, c.reps)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("lmSeeds(%q, %d, %d) = %v, %v; want %v", c.list, c.first, c.reps, got, err, c.want)
		}
	}
	for _, c := range []struct {
		list string
		reps int
		want string
	}{
		{"", 0, "-reps 0"},
		{"1,x", 1, `"x" is not a seed`},
		{"1,,2", 1, `"" is not a seed`},
		{"4..2", 1, "not a range"},
		{"1..y", 1, "not a range"},
		{"1,2,1", 1, "seed 1 twice"},
		{"1..3,2", 1, "seed 2 twice"},
		{"0..100000", 1, "more than 10000"},
	} {
		if _, err := lmSeeds(c.list, 1, c.reps); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("lmSeeds(%q, 1, %d): error %v, want one saying %q", c.list, c.reps, err, c.want)
		}
	}
}

func TestSeedsString(t *testing.T) {
	for _, c := range []struct {
		seeds []int
		want  string
	}{
		{[]int{1}, "1"},
		{[]int{1, 2, 3}, "1..3"},
		{[]int{5, 1, 2, 9}, "5,1..2,9"},
		{nil, ""},
	} {
		if got := seedsString(c.seeds); got != c.want {
			t.Errorf("seedsString(%v) = %q, want %q", c.seeds, got, c.want)
		}
	}
}

func TestMeanSD(t *testing.T) {
	f := func(r result) float64 { return r.valBPB }
	rs := []result{{valBPB: 2}, {valBPB: 4}, {valBPB: 4}, {valBPB: 4}, {valBPB: 5}, {valBPB: 5}, {valBPB: 7}, {valBPB: 9}}
	// Mean 5; squared deviations sum to 32, over n-1 = 7.
	if m, sd := meanSD(rs, f); m != 5 || math.Abs(sd-math.Sqrt(32.0/7)) > 1e-12 {
		t.Errorf("meanSD = %g, %g; want 5, %g", m, sd, math.Sqrt(32.0/7))
	}
	if m, sd := meanSD(rs[:1], f); m != 2 || sd != 0 {
		t.Errorf("one value: %g, %g; want 2, 0", m, sd)
	}
	if m, sd := meanSD(nil, f); m != 0 || sd != 0 {
		t.Errorf("no values: %g, %g; want 0, 0", m, sd)
	}
}

// TestPairedDiff: the runs pair by seed whatever order they came in, and the statistics are of the
// differences, not of each side's spread.
func TestPairedDiff(t *testing.T) {
	f := func(r result) float64 { return r.valBPB }
	base := []result{{seed: 1, valBPB: 2.0}, {seed: 2, valBPB: 3.0}, {seed: 3, valBPB: 2.5}}
	other := []result{{seed: 3, valBPB: 2.4}, {seed: 1, valBPB: 2.1}, {seed: 2, valBPB: 3.2}}
	d, err := pairedDiff(base, other, f)
	if err != nil {
		t.Fatal(err)
	}
	// Differences +0.1, +0.2, -0.1: mean 0.0667, sd sqrt(((1/30)^2 + (4/30)^2 + (5/30)^2) / 2).
	sd := math.Sqrt((1.0/900 + 16.0/900 + 25.0/900) / 2)
	if d.n != 3 || math.Abs(d.mean-0.2/3) > 1e-12 || math.Abs(d.sd-sd) > 1e-12 ||
		math.Abs(d.se-sd/math.Sqrt(3)) > 1e-12 || d.lower != 1 {
		t.Errorf("pairedDiff = %+v; want n 3, mean %g, sd %g, se %g, lower 1", d, 0.2/3, sd, sd/math.Sqrt(3))
	}
	if s := d.String(); !strings.HasPrefix(s, "+0.0667 ± 0.0882 (sd 0.1528; lower in 1 of 3)") {
		t.Errorf("String() = %q", s)
	}
	for _, c := range []struct {
		other []result
		want  string
	}{
		{other[:2], "cannot pair"},
		{[]result{{seed: 1}, {seed: 2}, {seed: 4}}, "seed 3 has no pair"},
		{[]result{{seed: 1}, {seed: 1}, {seed: 2}}, "seed 1 twice"},
	} {
		if _, err := pairedDiff(base, c.other, f); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("pairedDiff(base, %v): error %v, want one saying %q", c.other, err, c.want)
		}
	}
}

func TestOwnDefaults(t *testing.T) {
	for _, c := range []struct {
		d      string
		budget float64
		want   bool
	}{{"", 0, false}, {"", 60, true}, {"shared", 60, false}, {"own", 0, true}} {
		if got, err := ownDefaults(c.d, c.budget); err != nil || got != c.want {
			t.Errorf("ownDefaults(%q, %g) = %v, %v; want %v", c.d, c.budget, got, err, c.want)
		}
	}
	if _, err := ownDefaults("mine", 0); err == nil {
		t.Error(`ownDefaults("mine"): no error`)
	}
}

// TestLMParams: shared gives train_lm.star's hyperparameters (dropout 0) to both sides, own only the
// sizes; -set overrides either and goes to both.
func TestLMParams(t *testing.T) {
	set := sets{"dim=128", "lr=2e-3"}
	shared := lmParams(set, false)
	for _, want := range []string{"vocab=1024", "dim=128", "lr=2e-3", "min_lr=1e-4", "warmup=20", "dropout=0.0", "weight_decay=0.1", "clip=1.0"} {
		if !slices.Contains(shared, want) {
			t.Errorf("shared %v lacks %s", shared, want)
		}
	}
	if slices.Contains(shared, "dim=256") || slices.Contains(shared, "lr=1e-3") {
		t.Errorf("shared %v keeps a default -set overrides", shared)
	}
	own := lmParams(set, true)
	for _, s := range own {
		k, _, _ := strings.Cut(s, "=")
		if slices.ContainsFunc(lmHyper, func(h string) bool { return strings.HasPrefix(h, k+"=") }) && s != "lr=2e-3" {
			t.Errorf("own %v gives the default %s", own, s)
		}
	}
	if !slices.Contains(own, "lr=2e-3") || !slices.Contains(own, "seq=128") {
		t.Errorf("own %v lacks -set's lr or the default seq", own)
	}
	args, err := lmArgs(sets{"weight_decay=0.05", "kv_heads=2", "min_lr=1e-4", "dropout=0.1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--wd", "0.05", "--kv-heads", "2", "--min-lr", "1e-4", "--dropout", "0.1"}; !slices.Equal(args, want) {
		t.Errorf("lmArgs = %v, want %v", args, want)
	}
	if _, err := lmArgs(sets{"lr"}); err == nil {
		t.Error(`lmArgs("lr"): no error`)
	}
}

func TestCheckFlags(t *testing.T) {
	for _, c := range []struct {
		mode  string
		given []string
		ok    bool
	}{
		{"lm", []string{"seeds", "budget"}, true},
		{"lm", []string{"reps", "seed"}, true},
		{"lm", []string{"seeds", "reps"}, false},
		{"lm", []string{"seeds", "seed"}, false},
		{"layer", []string{"reps", "seed"}, true},
		{"layer", []string{"budget"}, false},
		{"layer", []string{"seeds"}, false},
		{"layer", []string{"defaults"}, false},
		{"layer", []string{"same-start"}, false},
		{"lm", []string{"same-start", "seeds", "steps"}, true},
		{"lm", []string{"same-start", "budget"}, false},
		{"lm", []string{"same-start", "text"}, false},
	} {
		g := map[string]bool{}
		for _, f := range c.given {
			g[f] = true
		}
		if err := checkFlags(config{mode: c.mode}, g); (err == nil) != c.ok {
			t.Errorf("checkFlags(%s, %v) = %v, want ok %v", c.mode, c.given, err, c.ok)
		}
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	runs := []run{{name: "anestar fp16"}, {name: "pytorch 1t"}}
	all := map[string][]result{
		"anestar fp16": {{ms: 12.5, tokensS: 800, valLoss: 3.25, seed: 1, steps: 10, rssKB: 2048}, {ms: 13, seed: 2, steps: 10}},
		"pytorch 1t":   {{ms: 20, tokensS: 500, valLoss: 3.5, valBPB: 1.9, seed: 1, steps: 10}},
	}
	if err := writeJSON(path, runs, all); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got = append(got, r)
	}
	want := []record{{"anestar fp16", 1, 10, 12.5, 800, 3.25, 0, 2048}, {"anestar fp16", 2, 10, 13, 0, 0, 0, 0}, {"pytorch 1t", 1, 10, 20, 500, 3.5, 1.9, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

func TestPairedRatios(t *testing.T) {
	base := []result{{seed: 1, ms: 150}, {seed: 2, ms: 130}, {seed: 3, ms: 160}}
	other := []result{{seed: 2, ms: 91}, {seed: 3, ms: 96}, {seed: 1, ms: 93}}
	x, err := pairedRatios(base, other)
	if err != nil {
		t.Fatal(err)
	}
	// Seed by seed 93/150 = 0.62, 91/130 = 0.70, 96/160 = 0.60; the ratio of medians would be 93/150.
	if x.n != 3 || math.Abs(x.med-0.62) > 1e-12 || math.Abs(x.lo-0.6) > 1e-12 || math.Abs(x.hi-0.7) > 1e-12 {
		t.Errorf("pairedRatios = %+v; want n 3, median 0.62, range 0.60-0.70", x)
	}
	if s := x.String(); s != "median 0.62x (0.60-0.70 over 3 seeds)" {
		t.Errorf("String() = %q", s)
	}
	if _, err := pairedRatios(base, other[:2]); err == nil || !strings.Contains(err.Error(), "cannot pair") {
		t.Errorf("unpaired: error %v, want one saying cannot pair", err)
	}
	if _, err := pairedRatios([]result{{seed: 1}}, []result{{seed: 1, ms: 90}}); err == nil || !strings.Contains(err.Error(), "seed 1") {
		t.Errorf("a base without ms/step: error %v, want one naming seed 1", err)
	}
}
