package metrics

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Redraw and print intervals of a Progress.
const (
	// MinRedraw is the shortest time between two redraws of a terminal line.
	MinRedraw = 100 * time.Millisecond
	// DefaultInterval is the default time between plain progress lines.
	DefaultInterval = 5 * time.Second
)

// Progress reports how far a run has come, as
//
//	step 12/100  loss 0.0123  231.5 ms/step  eta 20s
//
// On a terminal it redraws that one line in place (a carriage return, then the text
// padded with spaces over the previous one), at most once per [MinRedraw]. Elsewhere
// (a pipe, a CI log) it prints plain lines with no control characters: for the first
// update, the last step (step == total) and otherwise at most once per Interval.
//
// ms/step is the wall time per step averaged since the first Update, and the ETA
// is that rate times the steps left; both appear once a second update has
// advanced the step. Fields are shown with four significant digits, "loss" first
// and the rest sorted by name. With total <= 0 the total and the ETA are left out.
//
// Set the exported fields before the first Update. A Progress is safe for
// concurrent use.
type Progress struct {
	Terminal bool             // redraw one line in place rather than print lines
	Interval time.Duration    // time between plain lines; DefaultInterval if zero
	Now      func() time.Time // the clock; time.Now if nil
	Label    string           // the word before the count and after ms/: "step" if empty
	// Delay holds every line back until this long after the first update (a phase that may be quick
	// stays silent): nothing is shown of a count that ends sooner.
	Delay time.Duration

	mu        sync.Mutex
	w         io.Writer
	started   bool      // an update has come since New or Done
	startStep int       // step of the first update
	startTime time.Time // time of the first update
	runStart  time.Time // time of the first update since New: the run's elapsed time counts from it, across Done
	lastShown time.Time // when a line was last drawn or printed
	shown     bool      // a line of this count was shown
	pending   string    // text of an update not shown yet, or ""
	width     int       // length of the line now on the terminal
}

// NewProgress returns a Progress writing to w, in terminal mode when w is an
// *os.File for which [IsTerminal] holds.
func NewProgress(w io.Writer) *Progress {
	f, _ := w.(*os.File)
	return &Progress{w: w, Terminal: IsTerminal(f)}
}

// Update reports that step of total steps is done, with the given metrics.
func (p *Progress) Update(step, total int, fields map[string]float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	first := !p.started
	if first {
		p.started, p.startStep, p.startTime = true, step, now
		if p.runStart.IsZero() {
			p.runStart = now
		}
	}
	text := p.format(step, total, fields, now)
	last := total > 0 && step >= total
	gap := p.Interval
	if gap <= 0 {
		gap = DefaultInterval
	}
	if p.Terminal {
		gap = MinRedraw
	}
	held := p.Delay > 0 && now.Sub(p.startTime) < p.Delay && !p.shown // a quick phase stays silent
	if !held && (first || last || now.Sub(p.lastShown) >= gap || p.Delay > 0 && !p.shown) {
		p.show(text, now)
	} else {
		p.pending = text
	}
}

// Done shows the latest update if it was held back and, on a terminal, ends the
// line. The next Update starts a new count of ms/step and the ETA (what ran between,
// a validation, is not a step's); the elapsed time shown at the last step is the
// whole run's.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.started {
		return
	}
	if p.pending != "" && (p.Delay <= 0 || p.shown) {
		p.show(p.pending, p.now())
	}
	if p.Terminal && p.shown {
		io.WriteString(p.w, "\n")
	}
	p.started, p.width, p.shown, p.pending = false, 0, false, ""
}

func (p *Progress) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// show writes text: over the current line on a terminal, as a new line elsewhere.
func (p *Progress) show(text string, now time.Time) {
	p.lastShown, p.pending, p.shown = now, "", true
	if !p.Terminal {
		io.WriteString(p.w, text+"\n")
		return
	}
	pad := ""
	if n := len(text); n < p.width {
		pad = strings.Repeat(" ", p.width-n)
	}
	p.width = len(text)
	io.WriteString(p.w, "\r"+text+pad)
}

// format builds the status text.
func (p *Progress) format(step, total int, fields map[string]float64, now time.Time) string {
	var b strings.Builder
	label := p.Label
	if label == "" {
		label = "step"
	}
	if total > 0 {
		fmt.Fprintf(&b, "%s %d/%d", label, step, total)
	} else {
		fmt.Fprintf(&b, "%s %d", label, step)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "loss" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if _, ok := fields["loss"]; ok {
		keys = append([]string{"loss"}, keys...)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s %s", k, strconv.FormatFloat(fields[k], 'g', 4, 64))
	}
	elapsed := now.Sub(p.startTime)
	if done := step - p.startStep; done > 0 {
		perStep := elapsed / time.Duration(done)
		fmt.Fprintf(&b, "  %.1f ms/%s", float64(perStep)/float64(time.Millisecond), label)
		if total > 0 && step < total {
			fmt.Fprintf(&b, "  eta %s", FormatDuration(perStep*time.Duration(total-step)))
		}
	}
	if total > 0 && step >= total { // the whole run's, validations between counts included
		fmt.Fprintf(&b, "  elapsed %s", FormatDuration(now.Sub(p.runStart)))
	}
	return b.String()
}

// FormatDuration writes d to the second, as 7s, 4m05s or 2h03m07s.
func FormatDuration(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	if s < 0 {
		s = 0
	}
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}
