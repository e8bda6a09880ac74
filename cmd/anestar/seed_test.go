package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeedFlag checks that --seed sets a script's seed parameter when it declares one, seeds the run's
// generator when it does not, and conflicts with a different --set seed.
func TestSeedFlag(t *testing.T) {
	dir := t.TempDir()
	withParam := filepath.Join(dir, "p.star")
	os.WriteFile(withParam, []byte("P = params(seed = 1)  # the seed\nprint(\"seed\", P.seed, process.seed)\n"), 0o644)
	without := filepath.Join(dir, "q.star")
	os.WriteFile(without, []byte("print(\"seed\", process.seed)\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{withParam}, exitOK, "seed 1 0\n"},
		{[]string{withParam, "--seed", "5"}, exitOK, "seed 5 5\n"},
		{[]string{withParam, "--seed", "5", "--set", "seed=5"}, exitOK, "seed 5 5\n"},
		{[]string{withParam, "--seed", "5", "--set", "seed=6"}, exitUsage, "--seed 5 and --set seed=6 disagree"},
		{[]string{without, "--seed", "9"}, exitOK, "seed 9\n"},
		{[]string{"check", withParam, "--seed", "5", "--set", "seed=6"}, exitUsage, "disagree"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String()+errb.String(), c.want) {
			t.Errorf("%q: exit %d, output %q %q; want exit %d and %q", c.args, code, out.String(), errb.String(), c.code, c.want)
		}
	}
}
