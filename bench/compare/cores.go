package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// OpenBLAS fixes its kernels when it loads, from OPENBLAS_CORETYPE or, unset, its own detection (anestar
// then names the kernels from the CPU's features; Debian's PyTorch keeps OpenBLAS's choice, which on
// CPUs newer than the library is its slowest). -cores runs every configuration under each setting; a
// setting "A/P" gives anestar's runs A and the peers' P (each side on its own best core: default/Haswell
// on an AMD EPYC, where anestar chooses SkylakeX and the peer is fastest on Haswell's kernels).

const coreTypeEnv = "OPENBLAS_CORETYPE"

// coreEnv is the OPENBLAS_CORETYPE setting of the run under way: "" leaves the environment as it is,
// "default" unsets the variable, anything else sets it. Runs are sequential, so one value serves.
var coreEnv string

// withCores repeats runs under each of the comma-separated core settings (none: runs as they are),
// naming each copy after its setting.
func withCores(cores string, runs []run) []run {
	var list []string
	for _, s := range strings.Split(cores, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	if len(list) == 0 {
		return runs
	}
	var out []run
	for _, setting := range list {
		for _, r := range runs {
			core := sideCore(setting, isPeerRun(r.name))
			out = append(out, run{r.name + " [" + setting + "]", func(rep int) (result, error) {
				coreEnv = core
				defer func() { coreEnv = "" }()
				return r.fn(rep)
			}})
		}
	}
	return out
}

// sideCore is the core a setting gives one side: "A/P" is A for anestar's runs and P for the peers',
// anything else the same for both.
func sideCore(setting string, peer bool) string {
	a, p, two := strings.Cut(setting, "/")
	if !two {
		return setting
	}
	if peer {
		return p
	}
	return a
}

// isPeerRun reports whether the run named name is a PyTorch peer's (or -base-peer's).
func isPeerRun(name string) bool {
	return strings.HasPrefix(name, "pytorch ") || strings.HasPrefix(name, "base pytorch ")
}

// coreGroup is the core setting a run's name ends with ("" for none), which its ratios stay within.
func coreGroup(name string) string {
	if i := strings.LastIndex(name, " ["); i >= 0 && strings.HasSuffix(name, "]") {
		return name[i:]
	}
	return ""
}

// environ is the environment of a run: the process's, with OPENBLAS_CORETYPE as coreEnv says.
func environ() []string {
	if coreEnv == "" {
		return os.Environ()
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, coreTypeEnv+"=") {
			env = append(env, e)
		}
	}
	if coreEnv != "default" {
		env = append(env, coreTypeEnv+"="+coreEnv)
	}
	return env
}

// peerRun is the fastest peer run of a core group.
type peerRun struct {
	name string
	ms   float64
}

// peerBest finds, in each core group, the peer run ("pytorch ..." ) with the lowest median ms/step: the
// peer's best thread setting, which every ratio of the group is to.
func peerBest(names []string, all map[string][]result) map[string]peerRun {
	best := map[string]peerRun{}
	for _, n := range names {
		if !strings.HasPrefix(n, "pytorch ") {
			continue
		}
		g := coreGroup(n)
		if m := med(all[n], func(r result) float64 { return r.ms }); best[g].ms == 0 || m < best[g].ms {
			best[g] = peerRun{n, m}
		}
	}
	return best
}

// printBest says what the ratios are to.
func printBest(best map[string]peerRun) {
	groups := make([]string, 0, len(best))
	for g := range best {
		groups = append(groups, g)
	}
	slices.Sort(groups)
	for _, g := range groups {
		fmt.Printf("ratios%s are to the peer's best thread setting (%s, %.1f ms/step)\n", g, best[g].name, best[g].ms)
	}
}
