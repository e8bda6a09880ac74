package builtins

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/internal/floats"

	"go.starlark.net/starlark"
)

// queue runs host math on its own goroutine, one job after another in submission order, like the
// reference's serial dispatch queue: weight-gradient sgemms overlap the kernel evals of the script.
//
// Submitting a job places holds on its tensors' storage: a read hold on what it reads, a write hold
// on what it writes. Until the job finishes, the script may not read a tensor the job writes nor
// change one it reads or writes (the tensor methods check the holds and fail), and another queue may
// not use it. Only the script's thread adds holds and only the worker removes them, under the
// storage's mutex, so a check that passes cannot be invalidated before the script's access ends.
type queue struct {
	s     *session
	jobs  chan *job
	done  chan struct{} // closed when the worker exits
	last  *job          // the most recently submitted job
	count int           // jobs submitted

	waiting atomic.Bool // the script is in wait: queued products may take every core

	mu     sync.Mutex
	err    error // the first failure since the last wait
	closed bool
}

// job is one queued operation.
type job struct {
	name          string
	run           func() error
	reads, writes []*storage
	done          chan struct{}
}

func (s *session) newQueue() *queue {
	q := &queue{s: s, jobs: make(chan *job, 1024), done: make(chan struct{})}
	go q.work()
	s.queues = append(s.queues, q)
	return q
}

func (q *queue) work() {
	defer close(q.done)
	for j := range q.jobs {
		err := j.run()
		for _, st := range j.reads {
			st.mu.Lock()
			st.readers--
			st.release()
			st.mu.Unlock()
		}
		for _, st := range j.writes {
			st.mu.Lock()
			st.writers--
			st.release()
			st.mu.Unlock()
		}
		if err != nil {
			q.mu.Lock()
			if q.err == nil {
				q.err = fmt.Errorf("%s (queued): %w", j.name, err)
			}
			q.mu.Unlock()
		}
		close(j.done)
	}
}

// release forgets the owner once no holds remain; st.mu is held.
func (st *storage) release() {
	if st.readers == 0 && st.writers == 0 {
		st.owner = nil
	}
}

// submit queues run, holding reads and writes until it finishes. It fails, queuing nothing, when
// another queue holds one of the tensors.
func (q *queue) submit(name string, reads, writes []*Tensor, run func() error) error {
	if q.closed {
		return fmt.Errorf("%s: the queue is closed", name)
	}
	for _, t := range append(append([]*Tensor(nil), reads...), writes...) {
		t.st.mu.Lock()
		owner := t.st.owner
		t.st.mu.Unlock()
		if owner != nil && owner != q {
			return fmt.Errorf("%s: %s is held by pending work on another queue", name, t)
		}
	}
	for _, t := range writes {
		if t.frozen {
			return fmt.Errorf("%s: cannot change frozen %s", name, t)
		}
	}
	j := &job{name: name, run: run, done: make(chan struct{})}
	for _, t := range reads {
		t.st.mu.Lock()
		t.st.readers++
		t.st.owner = q
		t.st.mu.Unlock()
		j.reads = append(j.reads, t.st)
	}
	for _, t := range writes {
		t.st.mu.Lock()
		t.st.writers++
		t.st.owner = q
		t.st.mu.Unlock()
		j.writes = append(j.writes, t.st)
	}
	q.last = j
	q.count++
	q.jobs <- j
	return nil
}

// pending reports whether submitted work has not finished.
func (q *queue) pending() bool {
	if q.last == nil {
		return false
	}
	select {
	case <-q.last.done:
		return false
	default:
		return true
	}
}

// wait blocks until every submitted job has finished or the run is cancelled, and returns (and
// clears) the first failure of a queued job.
func (q *queue) wait(fn string) error {
	if q.last != nil {
		q.waiting.Store(true)
		defer q.waiting.Store(false)
		select {
		case <-q.last.done:
		case <-q.s.ctx.Done():
			return nameErr(fn, q.s.ctx.Err())
		}
	}
	q.mu.Lock()
	err := q.err
	q.err = nil
	q.mu.Unlock()
	return err
}

// close stops the worker after the queued jobs and returns their first failure.
func (q *queue) close() error {
	if !q.closed {
		q.closed = true
		close(q.jobs)
	}
	<-q.done
	q.mu.Lock()
	defer q.mu.Unlock()
	err := q.err
	q.err = nil
	return err
}

var queueType = &typeDef{
	name: "queue",
	doc: "A serial queue of host math that runs beside the script (made by cpu.queue()). Jobs run in " +
		"submission order. A tensor a pending job writes cannot be read by the script, and one it reads " +
		"or writes cannot be changed, until wait(): the access is an error, so no data race is possible. " +
		"Arguments are checked when a job is submitted; a failure while it runs is reported by the next wait().",
	members: []fnDef{
		{sig: "pending", doc: "True while submitted work has not finished."},
		{sig: "submitted", doc: "The number of jobs submitted so far."},
		{sig: "sgemm(a, b, c, trans_a = False, trans_b = False, alpha = 1.0, beta = 0.0)", doc: "Queues cpu.sgemm with the same arguments.", fn: queueSgemm},
		{sig: "axpy(alpha, x, y)", doc: "Queues y += alpha * x (tensors of the same shape).", fn: queueAxpy},
		{sig: "copy(dst, src)", doc: "Queues dst.copy_(src).", fn: queueCopy},
		{sig: "wait()", doc: "Blocks until every submitted job has finished; fails with the first error a job met.", fn: queueWait},
	},
}

var queueMethods = newMethodSet(queueType)

var _ starlark.HasAttrs = (*queue)(nil)

func (q *queue) String() string        { return fmt.Sprintf("queue(%d jobs)", q.count) }
func (q *queue) Type() string          { return "queue" }
func (q *queue) Freeze()               {}
func (q *queue) Truth() starlark.Bool  { return true }
func (q *queue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: queue") }
func (q *queue) AttrNames() []string   { return queueMethods.names }
func (q *queue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "pending":
		return starlark.Bool(q.pending()), nil
	case "submitted":
		return starlark.MakeInt(q.count), nil
	}
	return queueMethods.bind(q, name), nil
}

func queueSgemm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q := b.Receiver().(*queue)
	g, err := unpackSgemm(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.None, q.submit(b.Name(), []*Tensor{g.a, g.b}, []*Tensor{g.c}, func() error {
		// On one core while the script goes on: split over both, the products took the core slots
		// that the script's next kernel eval then waited for. Once the script waits, on every core.
		if q.waiting.Load() {
			return g.run()
		}
		return g.runOn(cpu.SgemmInTurn) // Sgemm's blocks, so the bits do not depend on when the script waits
	})
}

func queueAxpy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q := b.Receiver().(*queue)
	var alpha number
	var x, y *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "alpha", &alpha, "x", &x, "y", &y); err != nil {
		return nil, err
	}
	if err := sameShape(b.Name(), x, y); err != nil {
		return nil, err
	}
	return starlark.None, q.submit(b.Name(), []*Tensor{x}, []*Tensor{y}, func() error {
		floats.Axpy(float32(alpha), x.data, y.data)
		return nil
	})
}

func queueCopy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	q := b.Receiver().(*queue)
	var dst, src *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dst", &dst, "src", &src); err != nil {
		return nil, err
	}
	if dst.Size() != src.Size() {
		return nil, nameErrf(b.Name(), "src %s has %d elements, dst %s has %d", src, src.Size(), dst, dst.Size())
	}
	return starlark.None, q.submit(b.Name(), []*Tensor{src}, []*Tensor{dst}, func() error {
		copy(dst.data, src.data)
		return nil
	})
}

func queueWait(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := b.Receiver().(*queue).wait(b.Name()); err != nil {
		return nil, err
	}
	return starlark.None, nil
}
