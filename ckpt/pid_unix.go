//go:build unix

package ckpt

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with this pid runs (or exists but is not ours to signal).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
