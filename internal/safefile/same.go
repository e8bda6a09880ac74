package safefile

import (
	"os"
	"path/filepath"
)

// Same reports whether paths a and b name the same file: the same inode where both exist (through
// links and hard links), else the same absolute path once the links of its folder are resolved. A
// program checks its outputs against its inputs and each other with it before writing anything.
func Same(a, b string) bool {
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	return resolved(a) == resolved(b)
}

// resolved is path made absolute, with the links of its folder (and of itself, where it exists) resolved.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	} else if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		path = filepath.Join(dir, filepath.Base(path))
	}
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}
