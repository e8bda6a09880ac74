package ckpt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// SaveOptions tunes Save.
type SaveOptions struct {
	// Keep is how many earlier checkpoints to keep beside the new one, newest first, under the
	// names RotatedPath(path, 1) ... RotatedPath(path, Keep); 0 keeps none (the previous file
	// is simply replaced).
	Keep int
	// Perm is the permission of the saved file; 0 means 0644.
	Perm fs.FileMode
}

// RotatedPath returns the name of the k-th older checkpoint kept for path: "ckpt.safetensors"
// becomes "ckpt.1.safetensors", "ckpt.2.safetensors", ...; a name without an extension gets
// the number appended ("ckpt" becomes "ckpt.1").
func RotatedPath(path string, k int) string {
	ext := filepath.Ext(path)
	if ext == filepath.Base(path) { // a dot file such as ".ckpt" has no extension to keep
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "." + strconv.Itoa(k) + ext
}

// tempPrefix is the start of the names of Save's temporary files for path's base name; they
// are hidden and unique to the target so that a stale one is recognised and removed.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// tempOwner is the part of a temporary file's name after tempPrefix that names the process
// writing it, so that a Save removes only the leftovers of processes that are gone.
func tempOwner() string { return "p" + strconv.Itoa(os.Getpid()) + "-" }

// active holds the names of the temporary files of Saves in progress (see RemoveTemps).
var active sync.Map

// RemoveTemps deletes the temporary files of the Saves in progress in this process. A program
// that exits at once on a signal calls it first, so that an interrupted save leaves nothing behind.
func RemoveTemps() {
	active.Range(func(k, _ any) bool {
		os.Remove(k.(string))
		return true
	})
}

// Save writes f to path atomically: it encodes into a temporary file in the same directory,
// fsyncs it, renames it over path and fsyncs the directory. Whenever the process dies, path
// holds either the previous checkpoint or the new one, complete. With opts.Keep > 0 the
// previous checkpoints are rotated first: each RotatedPath(path, k) is replaced by the one
// before it and RotatedPath(path, 1) by path, through hard links (copies where the file
// system has none) renamed into place, so no slot is ever missing or torn. Temporary files
// left by a killed Save of the same path (or of its rotated copies) are removed, but never
// those of another running process. Concurrent Saves to the same path are not supported: a
// run holds the path's Lock. The metadata gains ChecksumKey, the tensors' checksums.
func Save(path string, f *File, opts SaveOptions) error {
	sealed, err := withChecksums(f)
	if err != nil {
		return fmt.Errorf("ckpt: save %s: %w", path, err)
	}
	return saveWith(path, opts, func(w io.Writer) error { return Encode(w, sealed) })
}

// saveWith is Save for any encoder: it writes what encode writes to path atomically, with
// opts's rotation and permissions.
func saveWith(path string, opts SaveOptions, encode func(io.Writer) error) (err error) {
	if opts.Keep < 0 {
		return fmt.Errorf("ckpt: save %s: negative Keep %d", path, opts.Keep)
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := removeTemps(dir, base, opts.Keep); err != nil {
		return fmt.Errorf("ckpt: save %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+tempOwner()+"*")
	if err != nil {
		return fmt.Errorf("ckpt: save %s: %w", path, err)
	}
	tmpName := tmp.Name()
	active.Store(filepath.Clean(tmpName), true)
	defer func() {
		active.Delete(filepath.Clean(tmpName))
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
			err = fmt.Errorf("ckpt: save %s: %w", path, err)
		}
	}()
	if err = encode(tmp); err != nil {
		return err
	}
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if opts.Keep > 0 {
		if err = rotate(dir, path, opts.Keep); err != nil {
			return err
		}
	}
	if err = os.Rename(tmpName, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// rotate shifts path.(keep-1) ... path.1 up by one slot and makes path.1 a copy of path,
// leaving path in place. Every slot is replaced atomically (linkOver), so at any moment each
// slot that existed still holds a complete checkpoint. Missing files are skipped; the work is
// proportional to the slots that exist, not to keep.
func rotate(dir, path string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	base := filepath.Base(path)
	var slots []int // existing slots below keep, highest first
	for _, e := range entries {
		if k, ok := rotatedIndex(base, e.Name()); ok && k < keep {
			slots = append(slots, k)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(slots)))
	for _, k := range slots {
		if err := linkOver(RotatedPath(path, k), RotatedPath(path, k+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := linkOver(path, RotatedPath(path, 1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// rotatedIndex returns k when name is RotatedPath(base, k) for some k >= 1.
func rotatedIndex(base, name string) (int, bool) {
	ext := filepath.Ext(base)
	if ext == base {
		ext = ""
	}
	stem := strings.TrimSuffix(base, ext) + "."
	mid, ok := strings.CutPrefix(name, stem)
	if !ok {
		return 0, false
	}
	mid, ok = strings.CutSuffix(mid, ext)
	if !ok || mid == "" || mid[0] == '0' {
		return 0, false
	}
	k, err := strconv.Atoi(mid)
	if err != nil || k < 1 || strconv.Itoa(k) != mid {
		return 0, false
	}
	return k, true
}

// linkOver atomically replaces dst with a hard link to src (made under a temporary name and
// renamed), or with a copy where the file system has no hard links.
func linkOver(src, dst string) error {
	if _, err := os.Lstat(src); err != nil {
		return err
	}
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, tempPrefix(base)+tempOwner()+"link")
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Link(src, tmp); err != nil {
		return copyFile(src, dst)
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return err
	}
	// When dst already was a link to src's file (a Save killed between its rotation and its final
	// rename leaves path and path.1 so), rename succeeds without doing anything and tmp remains.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// copyFile copies src to dst through a synced temporary file and a rename.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	out, err := os.CreateTemp(dir, tempPrefix(base)+tempOwner()+"*")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), dst)
	}
	if err != nil {
		os.Remove(out.Name())
	}
	return err
}

// removeTemps deletes the temporary files that killed Saves of dir/base (and of its rotated
// copies up to keep) left behind: those of this process and of processes that no longer run.
// Another running process's temporary file is left alone.
func removeTemps(dir, base string, keep int) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, ".") {
			continue
		}
		target, owner, ok := strings.Cut(name[1:], ".tmp-")
		if !ok {
			continue
		}
		if k, rot := rotatedIndex(base, target); target != base && (!rot || k > keep) {
			continue
		}
		if pid, ok := tempPid(owner); ok && pid != os.Getpid() && processAlive(pid) {
			continue
		}
		full := filepath.Join(dir, name)
		if _, busy := active.Load(full); busy {
			continue // a Save of this process is writing it
		}
		if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// tempPid reads the pid from the owner part of a temporary file's name ("p123-..."); names
// without one are from older versions and count as stale.
func tempPid(owner string) (int, bool) {
	p, ok := strings.CutPrefix(owner, "p")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(p, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

// syncDir makes a rename in dir durable. File systems that cannot sync a directory (the
// call fails with EINVAL or ENOTSUP) are accepted as they are.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		return nil
	}
	return err
}
