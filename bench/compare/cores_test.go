package main

import (
	"slices"
	"testing"
)

// TestWithCores: each run is repeated under every setting, named after it; "A/P" runs anestar under A
// and the peers under P, and the environment is left as it was after each run.
func TestWithCores(t *testing.T) {
	seen := map[string][]string{} // the cores each run was given, in order
	mk := func(name string) run {
		return run{name, func(int) (result, error) { seen[name] = append(seen[name], coreEnv); return result{}, nil }}
	}
	runs := withCores("SkylakeX, default/Haswell", []run{mk("anestar fp16"), mk("pytorch 1t"), mk("base pytorch 1t")})
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
		if _, err := r.fn(0); err != nil {
			t.Fatal(err)
		}
		if coreEnv != "" {
			t.Errorf("after %s: coreEnv %q left set", r.name, coreEnv)
		}
	}
	want := []string{"anestar fp16 [SkylakeX]", "pytorch 1t [SkylakeX]", "base pytorch 1t [SkylakeX]",
		"anestar fp16 [default/Haswell]", "pytorch 1t [default/Haswell]", "base pytorch 1t [default/Haswell]"}
	if !slices.Equal(names, want) {
		t.Errorf("runs %v, want %v", names, want)
	}
	for name, cores := range map[string][]string{"anestar fp16": {"SkylakeX", "default"}, "pytorch 1t": {"SkylakeX", "Haswell"},
		"base pytorch 1t": {"SkylakeX", "Haswell"}} {
		if !slices.Equal(seen[name], cores) {
			t.Errorf("%s: cores %v, want %v", name, seen[name], cores)
		}
	}
	if got := withCores(" ", runs[:1]); len(got) != 1 || got[0].name != runs[0].name {
		t.Errorf("no settings: %v, want the runs as they are", got)
	}
}
