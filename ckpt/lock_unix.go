//go:build unix

package ckpt

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile opens (creating) the lock file at path and locks it exclusively without waiting.
// It retries when the file it locked was removed meanwhile by the holder's Unlock.
func lockFile(path string) (*os.File, error) {
	for range 10 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: another run (pid %s) holds it; wait for it to end or give this run another checkpoint path", ErrLocked, readPid(path))
			}
			return nil, err
		}
		fst, err1 := f.Stat()
		pst, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(fst, pst) {
			return f, nil
		}
		f.Close() // locked a file that its holder removed: lock the new one
	}
	return nil, fmt.Errorf("%w: the lock file keeps changing", ErrLocked)
}

// holdsLock reports whether descriptor fd is the file at path and holds its lock (locking again
// what one holds succeeds), and makes it close-on-exec again.
func holdsLock(fd int, path string) bool {
	var fst, pst syscall.Stat_t
	if syscall.Fstat(fd, &fst) != nil || syscall.Stat(path, &pst) != nil || fst.Dev != pst.Dev || fst.Ino != pst.Ino {
		return false
	}
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.CloseOnExec(fd)
	return true
}

// inheritable clears close-on-exec on f's descriptor.
func inheritable(f *os.File) error {
	_, _, e := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), syscall.F_SETFD, 0)
	if e != 0 {
		return e
	}
	return nil
}
