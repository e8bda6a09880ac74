// Package atomicfile writes whole files so that a reader sees the old file or the new one, never a
// partial one: the data goes to a temporary file beside the target, which is renamed over it.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write writes data to name, which ends with permissions perm (the umask does not apply), through a
// temporary file in the same folder that is renamed to name. On error the temporary file is removed and
// name is untouched.
func Write(name string, data []byte, perm fs.FileMode) error {
	return WriteFunc(name, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFunc is Write with the data written by fill, as it comes (a file too large to hold in memory):
// an error from fill leaves name untouched.
func WriteFunc(name string, perm fs.FileMode, fill func(w io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	werr := fill(tmp)
	cerr := tmp.Close()
	err = errors.Join(werr, cerr)
	if err == nil {
		err = os.Chmod(tmp.Name(), perm)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
