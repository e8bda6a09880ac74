package ckpt

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// LockSuffix is appended to a checkpoint's path to name its lock file. The lock is a separate
// file because Save's atomic rename replaces the checkpoint's inode.
const LockSuffix = ".lock"

// lockEnv passes the locks a process holds to the program it execs: a JSON object of
// checkpoint path to descriptor number.
const lockEnv = "ANESTAR_CKPT_LOCKS"

// ErrLocked is wrapped by the error of Lock when another process holds the lock.
var ErrLocked = errors.New("checkpoint in use")

// A PathLock is an exclusive lock on a checkpoint path, held by one process (see Lock).
type PathLock struct {
	path string   // the checkpoint's path, absolute
	f    *os.File // the open lock file; nil once unlocked
}

var (
	locksMu sync.Mutex
	locks   = map[string]*PathLock{} // held by this process, by absolute checkpoint path
)

// Lock takes an exclusive lock on path's lock file, path+LockSuffix, which holds the pid of the
// process that holds it, so that two runs never write (or resume from) one checkpoint. When
// another process holds it, the error wraps ErrLocked and names that process's pid. A lock
// taken before the process exec'd itself (see InheritLocks) is taken over. Locking a path
// this process already holds is an error too: one run, one owner.
func Lock(path string) (*PathLock, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	locksMu.Lock()
	defer locksMu.Unlock()
	if _, held := locks[abs]; held {
		return nil, fmt.Errorf("ckpt: lock %s: %w: this process holds it already", path+LockSuffix, ErrLocked)
	}
	lockPath := abs + LockSuffix
	l := &PathLock{path: abs}
	if f := inherited(abs, lockPath); f != nil {
		l.f = f
	} else {
		f, err := lockFile(lockPath)
		if err != nil {
			return nil, fmt.Errorf("ckpt: lock %s: %w", path+LockSuffix, err)
		}
		l.f = f
	}
	if err := l.f.Truncate(0); err == nil {
		l.f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	locks[abs] = l
	return l, nil
}

// Path returns the checkpoint path the lock is for, absolute.
func (l *PathLock) Path() string { return l.path }

// Unlock removes the lock file and releases the lock. Unlocking twice is not an error.
func (l *PathLock) Unlock() error {
	locksMu.Lock()
	defer locksMu.Unlock()
	if l.f == nil {
		return nil
	}
	delete(locks, l.path)
	err := os.Remove(l.path + LockSuffix) // before the release: whoever locks next makes a new file
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// InheritLocks lets the program this process is about to exec keep its locks: it clears
// close-on-exec on each lock's descriptor and records them in the environment, where Lock in
// the new program finds them. Call it just before syscall.Exec.
func InheritLocks() error {
	locksMu.Lock()
	defer locksMu.Unlock()
	fds := map[string]uintptr{}
	for path, l := range locks {
		if err := inheritable(l.f); err != nil {
			return fmt.Errorf("ckpt: keep the lock of %s across exec: %w", path, err)
		}
		fds[path] = l.f.Fd()
	}
	b, _ := json.Marshal(fds)
	return os.Setenv(lockEnv, string(b))
}

// inherited returns the lock file of path that this process inherited across exec, or nil,
// and drops its entry from the environment.
func inherited(path, lockPath string) *os.File {
	var fds map[string]uint32
	if json.Unmarshal([]byte(os.Getenv(lockEnv)), &fds) != nil {
		return nil
	}
	fd, ok := fds[path]
	if !ok || fd > 1<<30 {
		return nil
	}
	delete(fds, path)
	b, _ := json.Marshal(fds)
	os.Setenv(lockEnv, string(b))
	// The descriptor must still be this lock file, holding its lock; otherwise it is not ours
	// (any more) and is left alone.
	if !holdsLock(int(fd), lockPath) {
		return nil
	}
	return os.NewFile(uintptr(fd), lockPath)
}

// readPid returns the pid recorded in a lock file, or "unknown".
func readPid(path string) string {
	b, err := safefile.ReadFile(path, 64)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" && len(s) < 20 {
		return s
	}
	return "unknown"
}
