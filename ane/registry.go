package ane

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// EnvBackend names the environment variable that forces a backend when no flag does.
const EnvBackend = "ANESTAR_BACKEND"

// Entry describes one backend to the registry.
type Entry struct {
	Name     string                          // registry name, e.g. "ane" or "emulator"
	Summary  string                          // one line for `anestar backends`
	Priority int                             // higher is preferred by "auto"
	Probe    func() error                    // nil when the backend can run here, else why not
	Open     func(Settings) (Backend, error) // opens a new backend instance; refuses settings it cannot honour
}

var (
	regMu   sync.Mutex
	entries = map[string]Entry{}
)

// Register adds a backend to the registry; backends call it from init.
func Register(e Entry) {
	regMu.Lock()
	defer regMu.Unlock()
	entries[e.Name] = e
}

// Status is a registered backend and whether it can run on this machine.
type Status struct {
	Entry
	Err error // nil when available, else why it is not
}

// List returns every registered backend, most preferred first, with its availability.
func List() []Status {
	regMu.Lock()
	var all []Status
	for _, e := range entries {
		all = append(all, Status{Entry: e})
	}
	regMu.Unlock()
	sort.Slice(all, func(i, j int) bool {
		if all[i].Priority != all[j].Priority {
			return all[i].Priority > all[j].Priority
		}
		return all[i].Name < all[j].Name
	})
	for i := range all {
		if all[i].Probe != nil {
			all[i].Err = all[i].Probe()
		}
	}
	return all
}

// Open opens the backend called name. "auto" (or "") picks the most preferred available backend,
// unless the environment variable ANESTAR_BACKEND names one.
func Open(name string, opts Settings) (Backend, error) {
	if name == "" || name == "auto" {
		if env := os.Getenv(EnvBackend); env != "" && env != "auto" {
			return Open(env, opts)
		}
		for _, s := range List() {
			if s.Err == nil {
				return s.Open(opts)
			}
		}
		return nil, fmt.Errorf("no backend is available (run `anestar backends`)")
	}
	regMu.Lock()
	e, ok := entries[name]
	regMu.Unlock()
	if !ok {
		var names []string
		for _, s := range List() {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("unknown backend %q (known: auto, %s)", name, strings.Join(names, ", "))
	}
	if e.Probe != nil {
		if err := e.Probe(); err != nil {
			return nil, fmt.Errorf("backend %q is not available: %w", name, err)
		}
	}
	return e.Open(opts)
}
