package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
)

// loadEntry is a loaded (or loading) file, cached for the run so that each file executes once.
type loadEntry struct {
	globals starlark.StringDict
	err     error
	loading bool // true while its top level runs: loading it again is a cycle
}

// load implements load(): names in Config.Modules first, else a file path relative to the folder of
// the file that executes the load statement.
func (s *session) load(thread *starlark.Thread, module string) (starlark.StringDict, error) {
	if m, ok := s.cfg.Modules[module]; ok {
		return m, nil
	}
	from := thread.CallFrame(0).Pos.Filename()
	path := module
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from), module)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if e, ok := s.loads[abs]; ok {
		if e.loading {
			return nil, fmt.Errorf("cycle in load graph: %s", s.loadChain(thread, abs, path))
		}
		return e.globals, e.err
	}
	e := &loadEntry{loading: true}
	s.loads[abs] = e
	src, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.err = fmt.Errorf("no such file %s (a load path is relative to the folder of the file that loads it, %s)", path, from)
	case err != nil:
		e.err = err
	default:
		e.globals, e.err = starlark.ExecFileOptions(FileOptions, thread, path, src, s.predeclared)
	}
	e.loading = false
	return e.globals, e.err
}

// loadChain describes the cycle that reaches abs again, from the files on the call stack.
func (s *session) loadChain(thread *starlark.Thread, abs, path string) string {
	var chain []string
	stack := thread.CallStack()
	started := false
	for _, fr := range stack {
		if fr.Name != "<toplevel>" {
			continue
		}
		f, _ := filepath.Abs(fr.Pos.Filename())
		if f == abs {
			started = true
		}
		if started {
			chain = append(chain, fr.Pos.Filename())
		}
	}
	chain = append(chain, filepath.Clean(path))
	return strings.Join(chain, " -> ")
}
