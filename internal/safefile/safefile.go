package safefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotRegular is wrapped by the error for a path that names something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading and checks that it is a regular file. The open does not block on a
// FIFO. The caller closes the file.
func Open(path string) (*os.File, os.FileInfo, error) {
	f, err := openNonblock(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (it is %s)", path, ErrNotRegular, kind(st.Mode()))
	}
	return f, st, nil
}

// kind names a file mode's type for messages.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

// ReadFile reads the regular file at path whole. A file larger than limit bytes (limit <= 0: no
// limit but the file's size) is an error that names both sizes; nothing is allocated before the
// size is known.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := st.Size()
	if limit > 0 && size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, size, limit)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("%s: %d bytes do not fit in memory here", path, size)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, fmt.Errorf("%s: read %d bytes: %w", path, size, err)
	}
	return data, nil
}

// Within joins rel to dir and checks that the result, with every symbolic link resolved, still
// lies inside dir (also resolved): a link in a weights folder cannot reach a file outside it. It
// returns the joined path.
func Within(dir, rel string) (string, error) {
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s: an absolute path; want a path inside %s", rel, dir)
	}
	path := filepath.Join(dir, rel)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	root, _ = filepath.Abs(root)
	real, _ = filepath.Abs(real)
	r, err := filepath.Rel(root, real)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s resolves to %s, outside %s", path, real, dir)
	}
	return path, nil
}

// LimitReader returns a reader of r that fails (rather than stopping silently) once more than
// limit bytes are read: for decompressed streams, whose size no header bounds. what names the
// stream in the error.
func LimitReader(r io.Reader, limit int64, what string) io.Reader {
	return &limited{r: r, left: limit, limit: limit, what: what}
}

type limited struct {
	r           io.Reader
	left, limit int64
	what        string
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, err := l.r.Read(one[:]); n == 0 && err != nil {
			return 0, err // the stream ends at the limit
		}
		return 0, fmt.Errorf("%s: more than %d bytes", l.what, l.limit)
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
