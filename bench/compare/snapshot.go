package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// snapshot copies what a run reads as it starts — a script and the .star files of its folder and the
// folders under it (its lib/), or a peer's one file — into dir, and returns the copy's path. A run of
// many minutes thus trains what the tree held when compare started, though the tree is edited
// meanwhile (a later run reading a changed script would compare two programs). testdata folders are
// left out; "" stays "".
func snapshot(dir, path string) (string, error) {
	if path == "" {
		return "", nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if !strings.HasSuffix(path, ".star") {
		out := filepath.Join(dir, filepath.Base(path))
		return out, copyFile(path, out)
	}
	root := filepath.Dir(path)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("the script %s: %w", path, err)
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".star") {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return copyFile(p, out)
	})
	if err != nil {
		return "", fmt.Errorf("copying %s's scripts: %w", root, err)
	}
	return filepath.Join(dir, filepath.Base(path)), nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// snapshotAll snapshots the scripts and peers of c into tmp (snapshot), each in its own folder.
func snapshotAll(c *config, tmp string) error {
	for _, s := range []struct {
		name string
		path *string
		peer bool // a missing peer is left as it is: peerScripts says so and skips it
	}{{"script", &c.script, false}, {"base-script", &c.baseScript, false}, {"peer", &c.peer, true}, {"base-peer", &c.basePeer, true}} {
		if *s.path == "" {
			continue
		}
		if _, err := os.Stat(*s.path); err != nil && s.peer {
			continue
		}
		p, err := snapshot(filepath.Join(tmp, s.name), *s.path)
		if err != nil {
			return fmt.Errorf("-%s: %w", s.name, err)
		}
		*s.path = p
	}
	return nil
}
