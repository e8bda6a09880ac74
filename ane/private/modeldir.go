package private

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/anestar/anestar/internal/atomicfile"
)

// modelDir returns the directory in which a model with identifier hex is staged: tmp/hex, where tmp is
// the process's NSTemporaryDirectory(). The compiler looks for the MIL text and weights there, so the
// name must be the framework's own identifier; it must also be one plain path component.
func modelDir(tmp, hex string) (string, error) {
	if tmp == "" {
		return "", fmt.Errorf("model directory: no temporary directory")
	}
	if hex == "" || hex == "." || hex == ".." || strings.ContainsAny(hex, "/\\\x00") {
		return "", fmt.Errorf("model directory: identifier %q is not a plain file name", hex)
	}
	return filepath.Join(tmp, hex), nil
}

// stageModel writes the MIL text to dir/model.mil and every weight file to its place under dir,
// creating folders as needed. Each file is written to a temporary name and renamed, so a reader never
// sees a partial file.
func stageModel(dir string, milText []byte, files []weightFile) error {
	if err := os.MkdirAll(filepath.Join(dir, "weights"), 0o755); err != nil {
		return fmt.Errorf("model directory: %w", err)
	}
	if err := atomicfile.Write(filepath.Join(dir, milFileName), milText, 0o644); err != nil {
		return err
	}
	for _, f := range files {
		name := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return fmt.Errorf("weight file %q: %w", f.key, err)
		}
		if err := atomicfile.Write(name, f.data, 0o644); err != nil {
			return fmt.Errorf("weight file %q: %w", f.key, err)
		}
	}
	return nil
}

// dirUsers counts the live kernels staged in each model directory. Identical programs with identical
// weights get the same identifier and so share a directory, which is removed when its last user goes.
type dirUsers struct {
	mu sync.Mutex
	n  map[string]int
}

// stagedDirs is the process's table of model directories in use.
var stagedDirs = &dirUsers{n: map[string]int{}}

// acquire records one more user of dir.
func (d *dirUsers) acquire(dir string) {
	d.mu.Lock()
	d.n[dir]++
	d.mu.Unlock()
}

// release records that a user of dir is gone and removes dir when it was the last. The table lock is
// held during the removal so that a compile staging the same directory waits for it.
func (d *dirUsers) release(dir string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n[dir] <= 0 {
		return fmt.Errorf("model directory %s: released more often than acquired", dir)
	}
	d.n[dir]--
	if d.n[dir] > 0 {
		return nil
	}
	delete(d.n, dir)
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("model directory: %w", err)
	}
	return nil
}

// users reports how many live kernels use dir.
func (d *dirUsers) users(dir string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[dir]
}
