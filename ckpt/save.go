package ckpt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// Save writes f to path atomically: it encodes into a temporary file in the same directory,
// fsyncs it, renames it over path and fsyncs the directory. Whenever the process dies, path
// holds either the previous checkpoint or the new one, complete. With opts.Keep > 0 the
// previous checkpoints are rotated first: each RotatedPath(path, k) is replaced by the one
// before it and RotatedPath(path, 1) by path, through hard links (copies where the file
// system has none) renamed into place, so no slot is ever missing or torn. Temporary files
// left by a killed Save of the same path (or of its rotated copies) are removed. Concurrent
// Saves to the same path are not supported.
func Save(path string, f *File, opts SaveOptions) error {
	return saveWith(path, opts, func(w io.Writer) error { return Encode(w, f) })
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
	for k := 0; k <= opts.Keep; k++ {
		name := base
		if k > 0 {
			name = RotatedPath(base, k)
		}
		if err := removeTemps(dir, name); err != nil {
			return fmt.Errorf("ckpt: save %s: %w", path, err)
		}
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return fmt.Errorf("ckpt: save %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer func() {
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
		if err = rotate(path, opts.Keep); err != nil {
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
// slot that existed still holds a complete checkpoint. Missing files are skipped.
func rotate(path string, keep int) error {
	for k := keep; k >= 1; k-- {
		src := path
		if k > 1 {
			src = RotatedPath(path, k-1)
		}
		if err := linkOver(src, RotatedPath(path, k)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
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
	tmp := filepath.Join(dir, tempPrefix(base)+"link")
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
	out, err := os.CreateTemp(dir, tempPrefix(base)+"*")
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

// removeTemps deletes the temporary files that a killed Save of dir/base left behind.
func removeTemps(dir, base string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	prefix := tempPrefix(base)
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasPrefix(e.Name(), prefix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
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
