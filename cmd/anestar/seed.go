package main

import (
	"fmt"
	"strconv"

	"github.com/anestar/anestar/builtins"
)

// applySeedFlag makes --seed N mean --set seed=N for a script that declares a `seed` parameter (the
// training scripts reseed their generator from it, so the flag would otherwise change nothing). With no
// such parameter, --seed only seeds the run's random generator. Giving both --seed and a different
// --set seed is a usage error.
func applySeedFlag(script string, seedGiven bool, seed uint64, overrides map[string]string) error {
	if !seedGiven {
		return nil
	}
	ps, err := builtins.ScriptParams(script, nil)
	if err != nil {
		return nil // the run reports the script's syntax error
	}
	for _, p := range ps {
		if p.Name != "seed" {
			continue
		}
		want := strconv.FormatUint(seed, 10)
		if v, ok := overrides["seed"]; ok && v != want {
			return fmt.Errorf("--seed %d and --set seed=%s disagree: give one of them", seed, v)
		}
		overrides["seed"] = want
	}
	return nil
}
