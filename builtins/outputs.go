package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/anestar/anestar/ckpt"
	"go.starlark.net/starlark"
)

// processOutputs implements process.outputs: it checks, before any work, that every declared
// output can be written, and locks the checkpoints, so that a run (and `anestar check`) fails at
// once for a reason known at the start.
func (s *session) processOutputs(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, fmt.Errorf("%s: name each output: process.outputs(checkpoint = P.ckpt, metrics = P.metrics)", b.Name())
	}
	for _, kv := range kwargs {
		label := string(kv[0].(starlark.String))
		if kv[1] == starlark.None {
			continue
		}
		path, ok := starlark.AsString(kv[1])
		if !ok {
			return nil, fmt.Errorf("%s: %s: got %s, want a path (\"\" for none)", b.Name(), label, kv[1].Type())
		}
		if path == "" {
			continue
		}
		if err := writableOutput(path); err != nil {
			return nil, fmt.Errorf("%s: %s %v", b.Name(), label, err)
		}
		if label == "checkpoint" && !s.cfg.DryRun {
			if err := s.lockOutput(path); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", b.Name(), label, path, err)
			}
		}
	}
	return starlark.None, nil
}

// writableOutput checks that a file can be written at path: its folder exists and is writable,
// and path is not a folder.
func writableOutput(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a folder; want a file path", path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: the folder %s does not exist (create it, or choose another path)", path, dir)
	case err != nil:
		return fmt.Errorf("%s: %v", path, err)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".anestar-probe-*")
	if err != nil {
		return fmt.Errorf("%s: the folder %s is not writable: %v", path, dir, errors.Unwrap(err))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// lockOutput takes the lock of checkpoint path for the rest of the run, once.
func (s *session) lockOutput(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.locks[abs]; ok {
		return nil
	}
	l, err := ckpt.Lock(path)
	if err != nil {
		return err
	}
	if s.locks == nil {
		s.locks = map[string]*ckpt.PathLock{}
	}
	s.locks[abs] = l
	return nil
}

// unlockAll releases the run's checkpoint locks.
func (s *session) unlockAll() {
	for _, l := range s.locks {
		l.Unlock()
	}
	s.locks = nil
}
