package emulator

import (
	"fmt"
	"sync"

	"github.com/anestar/anestar/ane"
)

// Streams. A backend's kernels share one arena of scratch and take turns (scratch.go), so their
// evals never run at the same time. A script that runs two groups of sequences side by side, each on
// a core of its own, compiles each group's kernels on a stream of its own: a stream is a backend with
// the same options and compile count and an arena of its own, whose kernels evaluate while the other
// streams' do. Each stream holds its own scratch, about that of its largest kernel.

// streams are a backend's streams by number, 0 being the backend itself.
type streams struct {
	mu  sync.Mutex
	all map[int]*Backend
}

// maxStreams bounds a stream's number: each one holds scratch of its own.
const maxStreams = 64

var _ ane.Streams = (*Backend)(nil)

// Stream returns stream i of the backend (0: the backend itself), made at its first call with the
// backend's options as they are then. Kernels compiled on different streams evaluate at the same time;
// those of one stream take turns.
func (b *Backend) Stream(i int) (ane.Backend, error) {
	if i < 0 || i >= maxStreams {
		return nil, fmt.Errorf("emulator: stream %d: streams are numbered 0 to %d", i, maxStreams-1)
	}
	b.streams.mu.Lock()
	defer b.streams.mu.Unlock()
	s := b.streams.all[i]
	if s == nil {
		s = &Backend{opts: b.opts, compiles: b.compiles, ar: newArena(), streams: b.streams}
		b.streams.all[i] = s
	}
	return s, nil
}
