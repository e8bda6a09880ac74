package builtins

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	pkgmetrics "github.com/anestar/anestar/metrics"
	"go.starlark.net/starlark"
)

// lineWriter is the run's output: print and progress lines both go through it. It remembers whether
// the cursor is in the middle of a line (a progress line being redrawn in place), so that a print
// first ends that line instead of appending to it.
type lineWriter struct {
	mu      sync.Mutex
	w       io.Writer
	midLine bool // the last byte written was not a newline
}

func (lw *lineWriter) Write(b []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if len(b) > 0 {
		lw.midLine = b[len(b)-1] != '\n'
	}
	return lw.w.Write(b)
}

// println writes msg as a line of its own, ending a progress line first.
func (lw *lineWriter) println(msg string) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.midLine {
		io.WriteString(lw.w, "\n")
	}
	io.WriteString(lw.w, msg+"\n")
	lw.midLine = false
}

// endLine ends a line left open, so that what follows (an error on the same terminal) starts a line.
func (lw *lineWriter) endLine() {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.midLine {
		io.WriteString(lw.w, "\n")
		lw.midLine = false
	}
}

// progress is the Starlark value of process.progress: a metrics.Progress with its total.
type progress struct {
	p     *pkgmetrics.Progress
	total int
	step  int // the last step reported
}

var _ starlark.HasAttrs = (*progress)(nil)

var progressType = &typeDef{
	name: "progress",
	doc: "A progress report of a loop (from process.progress): `step 12/100  loss 2.31  231.5 ms/step  eta 20s`. " +
		"On a terminal one line is redrawn in place; elsewhere (a pipe, a log file) plain lines are printed, " +
		"no more often than every `every` seconds, plus the first and the last step; with --quiet nothing. " +
		"ms/step and the ETA are measured from the first update.",
	members: []fnDef{
		{sig: "total", doc: "The number of steps, as given."},
		{sig: "step", doc: "The step of the last update, 0 before the first."},
		{sig: "update(step, **fields)", doc: "Reports that step steps are done, with numbers to show, e.g. " +
			"`p.update(i + 1, loss = l, lr = rate)`; loss is shown first, the rest sorted by name.", fn: progressUpdate},
		{sig: "done()", doc: "Shows the last update if it was held back and ends the terminal line. A later update starts a new count.", fn: progressDone},
	},
}

var progressMethods = newMethodSet(progressType)

func (p *progress) String() string        { return fmt.Sprintf("progress(%d/%d)", p.step, p.total) }
func (p *progress) Type() string          { return "progress" }
func (p *progress) Freeze()               {}
func (p *progress) Truth() starlark.Bool  { return true }
func (p *progress) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: progress") }
func (p *progress) AttrNames() []string   { return progressMethods.names }
func (p *progress) Attr(name string) (starlark.Value, error) {
	switch name {
	case "total":
		return starlark.MakeInt(p.total), nil
	case "step":
		return starlark.MakeInt(p.step), nil
	}
	return progressMethods.bind(p, name), nil
}

func (s *session) processProgress(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var total int
	every := number(pkgmetrics.DefaultInterval.Seconds())
	label, delay := "step", number(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "total", &total, "every?", &every, "label?", &label, "delay?", &delay); err != nil {
		return nil, err
	}
	if label == "" || strings.ContainsAny(label, "\r\n") {
		return nil, nameErrf(b.Name(), "label %q: want a word such as \"step\"", label)
	}
	if !(delay >= 0) || math.IsInf(float64(delay), 0) {
		return nil, nameErrf(b.Name(), "delay = %v; want seconds, 0 or more", float64(delay))
	}
	if total < 0 {
		return nil, nameErrf(b.Name(), "total is %d; want the number of steps, or 0 when it is not known", total)
	}
	if !(every > 0) || math.IsInf(float64(every), 0) {
		return nil, nameErrf(b.Name(), "every = %v; want a positive number of seconds", float64(every))
	}
	mp := pkgmetrics.NewProgress(s.out)
	mp.Terminal = s.cfg.Terminal
	mp.Interval = time.Duration(float64(every) * float64(time.Second))
	mp.Now = s.now
	mp.Label, mp.Delay = label, time.Duration(float64(delay)*float64(time.Second))
	p := &progress{p: mp, total: total}
	s.mu.Lock()
	s.progresses = append(s.progresses, p)
	s.mu.Unlock()
	return p, nil
}

func progressUpdate(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := b.Receiver().(*progress)
	if len(args) != 1 {
		return nil, nameErrf(b.Name(), "got %d positional arguments; want update(step, name = number, ...)", len(args))
	}
	var step int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 1, &step); err != nil {
		return nil, err
	}
	fields := make(map[string]float64, len(kwargs))
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		f, ok := starlark.AsFloat(kv[1])
		if !ok {
			return nil, nameErrf(b.Name(), "%s = %s: got %s, want a number", name, kv[1], kv[1].Type())
		}
		fields[name] = f
	}
	p.step = step
	p.p.Update(step, p.total, fields)
	return starlark.None, nil
}

func progressDone(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	b.Receiver().(*progress).p.Done()
	return starlark.None, nil
}
