package tokenizer

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// TokenData is the ids of a token file, or of a folder of them (shards, read in name order as one
// sequence: llama2.c's pretokenized layout, data00.bin, data01.bin, ...), read where they lie: a range
// of ids is read from the files when asked for, so memory does not grow with the data (the page cache
// holds what is read often), and no file stays open between reads. Every id is checked when the data
// is opened, and again as it is read. Its methods may be called from several goroutines.
type TokenData struct {
	shards []tokenShard
	n      int64 // ids in all
	vocab  int   // every id is below it
}

// tokenShard is one token file of a TokenData, holding ids [start, start+n) of the whole.
type tokenShard struct {
	path     string
	start, n int64
	max      int // its largest id
}

// IsTokenData reports whether path names token data rather than text: a folder (of token files) or
// a name ending in .bin.
func IsTokenData(path string) bool {
	if strings.HasSuffix(path, ".bin") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// OpenTokens opens the token file at path, or the folder of .bin token files at path, checking every
// file (even length, ids below vocabSize, not empty; a text given as tokens is named as such) while
// holding a MiB of it at a time.
func OpenTokens(path string, vocabSize int) (*TokenData, error) {
	if err := checkTokenVocab(vocabSize); err != nil {
		return nil, err
	}
	paths := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("tokenizer: %w", err)
		}
		paths = paths[:0]
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".bin") && !e.IsDir() {
				paths = append(paths, filepath.Join(path, e.Name()))
			}
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("tokenizer: the folder %s holds no .bin token file (shards as llama2.c writes them: data00.bin, data01.bin, ...)", path)
		}
		slices.Sort(paths)
	}
	d := &TokenData{vocab: vocabSize}
	for _, p := range paths {
		if err := d.add(p, vocabSize); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// add opens and checks the token file at path and appends it as a shard.
func (d *TokenData) add(path string, vocabSize int) error {
	f, size, err := OpenRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if size == 0 {
		return fmt.Errorf("tokenizer: %s holds no tokens", path)
	}
	head := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("tokenizer: %s: %w", path, err)
	}
	if LooksLikeText(head) {
		return fmt.Errorf("tokenizer: %s reads as text (it is read as uint16 token ids because its name ends in .bin or it is in a folder of token files): give it a name not ending in .bin, or encode it first (anestar tokenize)", path)
	}
	if err := checkTokenLength(f, path, size); err != nil {
		return err
	}
	top := 0
	err = scanTokens(f, path, size, vocabSize, func(_ int64, b []byte) {
		for j := 0; j < len(b); j += 2 {
			top = max(top, int(binary.LittleEndian.Uint16(b[j:])))
		}
	})
	if err != nil {
		return err
	}
	d.shards = append(d.shards, tokenShard{path: path, start: d.n, n: size / 2, max: top})
	d.n += size / 2
	return nil
}

// Len returns the number of ids.
func (d *TokenData) Len() int64 { return d.n }

// Paths returns the token files, in the order their ids follow one another.
func (d *TokenData) Paths() []string {
	var ps []string
	for _, s := range d.shards {
		ps = append(ps, s.path)
	}
	return ps
}

// Max returns the largest id of ids [off, off+n): known for whole files, read for other ranges.
func (d *TokenData) Max(off, n int64) (int, error) {
	top := -1
	for _, s := range d.shards {
		lo, hi := max(off, s.start), min(off+n, s.start+s.n)
		switch {
		case lo >= hi:
			continue
		case lo == s.start && hi == s.start+s.n:
			top = max(top, s.max)
			continue
		}
		buf := make([]float32, min(hi-lo, 1<<16))
		for at := lo; at < hi; at += int64(len(buf)) {
			b := buf[:min(int64(len(buf)), hi-at)]
			if err := d.ReadFloat32(at, b); err != nil {
				return 0, err
			}
			for _, v := range b {
				top = max(top, int(v))
			}
		}
	}
	return top, nil
}

// ReadFloat32 reads ids [off, off+len(dst)) into dst as float32 values (exact: ids are below 2^16),
// across shards where the range spans several. An id outside the vocabulary (a file changed since it
// was opened) is an error naming its file and offset.
func (d *TokenData) ReadFloat32(off int64, dst []float32) error {
	if off < 0 || off+int64(len(dst)) > d.n {
		return fmt.Errorf("tokenizer: ids [%d, %d) outside the %d of the token data", off, off+int64(len(dst)), d.n)
	}
	var buf [4096]byte
	for len(dst) > 0 {
		i, _ := slices.BinarySearchFunc(d.shards, off, func(s tokenShard, off int64) int {
			switch {
			case s.start+s.n <= off:
				return -1
			case s.start > off:
				return 1
			}
			return 0
		})
		s := d.shards[i]
		f, err := os.Open(s.path)
		if err != nil {
			return fmt.Errorf("tokenizer: %w (the token data changed since it was opened?)", err)
		}
		for at := off - s.start; at < s.n && len(dst) > 0; {
			k := min(int64(len(buf)/2), s.n-at, int64(len(dst)))
			if _, err := f.ReadAt(buf[:2*k], 2*at); err != nil {
				f.Close()
				return fmt.Errorf("tokenizer: %s: offset %d: %w (the file changed since it was opened?)", s.path, 2*at, err)
			}
			for j := range k {
				id := binary.LittleEndian.Uint16(buf[2*j:])
				if int(id) >= d.vocab {
					f.Close()
					return fmt.Errorf("tokenizer: %s: offset %d: id %d outside the vocabulary of %d pieces (the file changed since it was opened?)", s.path, 2*(at+j), id, d.vocab)
				}
				dst[j] = float32(id)
			}
			dst, at, off = dst[k:], at+k, off+k
		}
		f.Close()
	}
	return nil
}
