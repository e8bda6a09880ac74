package tokenizer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// StreamChunk is about how many bytes of text EncodeStream reads and encodes at a time.
const StreamChunk = 4 << 20

// maxCachedWords bounds EncodeStream's table of merged words: past it the table starts again, so
// memory does not grow with a corpus's distinct words.
const maxCachedWords = 1 << 20

// CanStream reports whether EncodeStream can encode with this vocabulary: no text piece holds a space
// after a non-space (pieces of spaces alone may), so no merge crosses the start of a run of spaces and
// the text can be cut there.
func (t *Tokenizer) CanStream() bool { return t.splitSpaces }

// EncodeStream encodes the text read from r as Encode(text, bos, false) encodes it whole, about
// StreamChunk bytes at a time, each piece of text cut where a run of spaces starts after a non-space
// (so no word and no run of spaces is cut; a piece grows until it holds such a place or the text ends).
// emit gets the ids of each piece in order and must not keep the slice; progress, when not nil, gets
// each piece's text after its ids (it must not keep it) and the bytes read so far. Memory: a piece of text, its ids and a table of merged
// words, never the whole text. A vocabulary that cannot stream (CanStream) is an error.
func (t *Tokenizer) EncodeStream(r io.Reader, bos bool, emit func(ids []int) error, progress func(piece []byte, read int64)) error {
	return t.encodeStream(r, bos, emit, progress, StreamChunk)
}

// encodeStream is EncodeStream reading chunk bytes at a time, encoding GOMAXPROCS pieces at once.
func (t *Tokenizer) encodeStream(r io.Reader, bos bool, emit func(ids []int) error, progress func(piece []byte, read int64), chunk int) error {
	return t.encodeStreamOn(r, bos, emit, progress, chunk, runtime.GOMAXPROCS(0))
}

// encodeStreamOn is encodeStream on the given number of workers: a reader cuts the pieces, the workers
// encode them (each with its own merger and table of merged words: the ids do not depend on which),
// and the caller's goroutine emits them in order, at most 2*workers pieces ahead of it.
func (t *Tokenizer) encodeStreamOn(r io.Reader, bos bool, emit func(ids []int) error, progress func(piece []byte, read int64), chunk, workers int) error {
	if !t.splitSpaces {
		return fmt.Errorf("tokenizer: a piece of this vocabulary holds a space after its first byte, so merges cross spaces: the text must be encoded whole")
	}
	type job struct {
		text  []byte
		first bool
		read  int64
		ids   []int
		done  chan struct{}
	}
	workers = max(workers, 1)
	work, order := make(chan *job, workers), make(chan *job, 2*workers)
	stop := make(chan struct{})
	free := make(chan []int, 3*workers) // ids buffers back from the emitter, for the workers to reuse
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var m merger
			cache := map[string][]int32{}
			for j := range work {
				if len(cache) > maxCachedWords {
					clear(cache)
				}
				var buf []int
				select {
				case buf = <-free:
				default:
				}
				j.ids = t.encodeWords(buf[:0], string(j.text), j.first, &m, cache, nil)
				close(j.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		readErr = readPieces(r, chunk, func(piece []byte, first bool, read int64) error {
			j := &job{text: bytes.Clone(piece), first: first, read: read, done: make(chan struct{})}
			select {
			case order <- j:
			case <-stop:
				return errStopped
			}
			work <- j
			return nil
		})
	}()
	var err error
	for j := range order {
		<-j.done
		if err != nil {
			continue // drain: the reader stops at its next piece
		}
		ids := j.ids
		if bos && j.first {
			ids = append([]int{BOS}, ids...)
		}
		if len(ids) > 0 {
			if err = emit(ids); err != nil {
				close(stop)
				continue
			}
		}
		if progress != nil {
			progress(j.text, j.read)
		}
		select {
		case free <- j.ids:
		default:
		}
	}
	wg.Wait()
	if err != nil {
		return err
	}
	return readErr
}

// errStopped ends the reading of a stream whose encoding stopped.
var errStopped = errors.New("tokenizer: stopped")

// readPieces reads the text from r about chunk bytes at a time and calls fn with each piece of it in
// order, cut where a run of spaces starts after a non-space (lastCut: no word, no run of spaces and
// no merge of a streaming vocabulary is cut), first for the text's first piece, and the bytes read
// so far. A piece grows until it holds such a place or the text ends; fn must not keep it.
func readPieces(r io.Reader, chunk int, fn func(piece []byte, first bool, read int64) error) error {
	buf := make([]byte, 0, chunk)
	var read int64
	first, eof := true, false
	for {
		for !eof && len(buf) < cap(buf) {
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf, read = buf[:len(buf)+n], read+int64(n)
			if err == io.EOF {
				eof = true
			} else if err != nil {
				return fmt.Errorf("tokenizer: reading the text: %w", err)
			}
		}
		cut := len(buf)
		if !eof {
			if cut = lastCut(buf); cut < 0 { // one long word: read on
				buf = append(buf[:cap(buf)], make([]byte, cap(buf))...)[:len(buf)]
				continue
			}
		}
		if err := fn(buf[:cut], first, read); err != nil {
			return err
		}
		first = first && cut == 0
		buf = buf[:copy(buf, buf[cut:])]
		if eof && len(buf) == 0 {
			return nil
		}
	}
}

// lastCut returns the last position in text where a run of spaces starts after a non-space (not at 0,
// so the piece before it is not empty), or -1: no merge crosses it (CanStream).
func lastCut(text []byte) int {
	for i := len(text) - 1; i > 0; {
		j := bytes.LastIndexByte(text[:i+1], ' ')
		if j <= 0 {
			return -1
		}
		if text[j-1] != ' ' {
			return j
		}
		i = j - 1
	}
	return -1
}
