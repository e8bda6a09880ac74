//go:build !unix

package ckpt

import "os"

// Without flock, the lock file is only a record of the pid.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
}

func holdsLock(fd int, path string) bool { return false }
func inheritable(f *os.File) error       { return nil }
