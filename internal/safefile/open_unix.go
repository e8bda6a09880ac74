//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only without blocking on a FIFO that has no writer.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
