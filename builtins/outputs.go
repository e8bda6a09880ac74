package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/internal/safefile"
	"go.starlark.net/starlark"
)

// processOutputs implements process.outputs: it checks, before any work, that every declared
// output can be written, and locks the checkpoints, so that a run (and `anestar check`) fails at
// once for a reason known at the start.
func (s *session) processOutputs(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, nameErrf(b.Name(), "name each output: process.outputs(checkpoint = P.ckpt, metrics = P.metrics)")
	}
	for _, kv := range kwargs {
		label := string(kv[0].(starlark.String))
		if kv[1] == starlark.None {
			continue
		}
		path, ok := starlark.AsString(kv[1])
		if !ok {
			return nil, nameErrf(b.Name(), "%s: got %s, want a path (\"\" for none)", label, kv[1].Type())
		}
		if path == "" {
			continue
		}
		check := path
		if dry, err := s.makeOutDir(path); err != nil {
			return nil, nameErrf(b.Name(), "%s %s: %w", label, path, err)
		} else if dry != "" {
			check = dry // a dry run makes no folder: check that the nearest one that exists is writable
		}
		if err := writableOutput(check); err != nil {
			return nil, nameErrf(b.Name(), "%s %w", label, err)
		}
		if (label == "checkpoint" || label == "metrics") && !s.cfg.DryRun {
			if err := s.lockOutput(path); err != nil {
				return nil, nameErrf(b.Name(), "%s %s: %w", label, path, err)
			}
		}
	}
	return starlark.None, nil
}

// outDir is the output folder of the run of script: out/NAME, NAME its file name without extension.
func outDir(script string) string {
	name := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	if name == "" || name == "." || name == string(filepath.Separator) {
		name = "run"
	}
	return filepath.Join("out", name)
}

// makeOutDir creates the folder of path when it is missing, as the run's own output folder
// (process.out_dir) is made: a user who names a new folder for a checkpoint means it. A dry run
// creates nothing: it returns a path in the nearest folder that exists, for writableOutput to check
// instead (so that `anestar check` reports a path no run could create).
func (s *session) makeOutDir(path string) (dry string, err error) {
	dir := filepath.Clean(filepath.Dir(path))
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if !s.cfg.DryRun {
		return "", os.MkdirAll(dir, 0o755)
	}
	for {
		dir = filepath.Dir(dir)
		if _, err := os.Stat(dir); err == nil || dir == "." || dir == string(filepath.Separator) {
			return filepath.Join(dir, filepath.Base(path)), nil
		}
	}
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
		return fmt.Errorf("%s: %w", path, err)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a folder", path, dir)
	}
	probe, err := os.CreateTemp(dir, ".anestar-probe-*")
	if err != nil {
		return fmt.Errorf("%s: the folder %s is not writable: %w", path, dir, errors.Unwrap(err))
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

// refuseScript fails when path names the running script (the same file, through links): a builtin that
// writes would replace the program it runs.
func (s *session) refuseScript(path string) error {
	if s.cfg.Script == "" || s.cfg.Source != nil {
		return nil
	}
	if safefile.Same(path, s.cfg.Script) {
		return fmt.Errorf("%s is the running script %s: choose another path", path, s.cfg.Script)
	}
	return nil
}

// refuseScriptOf is refuseScript for a builtin called on th without a session of its own at hand
// (a method of a value: the tokenizer's save); nothing where th runs no session.
func refuseScriptOf(th *starlark.Thread, path string) error {
	if s, ok := th.Local(sessionKey).(*session); ok {
		return s.refuseScript(path)
	}
	return nil
}

// prepareSave readies path for a checkpoint save: it refuses the running script, locks the path for the
// run, and in a fresh run (not --resume) moves a checkpoint an earlier run left there to PATH.prev
// (replacing an older one: one generation kept) at the first save, saying so, so that a new run never
// silently replaces a trained model.
func (s *session) prepareSave(path string) error {
	if err := s.refuseScript(path); err != nil {
		return err
	}
	if err := s.lockOutput(path); err != nil {
		return err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	s.mu.Lock()
	first := !s.savedOnce[abs]
	if s.savedOnce == nil {
		s.savedOnce = map[string]bool{}
	}
	s.savedOnce[abs] = true
	s.mu.Unlock()
	if !first || s.cfg.Resume {
		return nil
	}
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	if err := os.Rename(path, path+".prev"); err != nil {
		return fmt.Errorf("keeping the earlier checkpoint as %s.prev: %w", path, err)
	}
	s.errw.println(fmt.Sprintf("note: %s held an earlier run's checkpoint; it is kept as %s.prev (a fresh run keeps one generation; --resume continues a checkpoint instead)", path, path))
	return nil
}
