package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) set(d time.Duration) { c.t = time.Unix(1000, 0).Add(d) }
func newFake() *fakeClock                { c := &fakeClock{}; c.set(0); return c }
func newTestProgress(term bool) (*Progress, *strings.Builder, *fakeClock) {
	var b strings.Builder
	c := newFake()
	p := NewProgress(&b)
	p.Terminal, p.Now = term, c.now
	return p, &b, c
}

func TestProgressPlain(t *testing.T) {
	p, out, clock := newTestProgress(false)
	p.Update(1, 1000, map[string]float64{"loss": 3})
	clock.set(2 * time.Second)
	p.Update(2, 1000, map[string]float64{"loss": 2.9}) // within 5s: held
	clock.set(25 * time.Second)
	// 10 steps in 25s: 2.5 s/step; 989 steps left: 2472.5s, rounded to 41m13s.
	p.Update(11, 1000, map[string]float64{"loss": 2.5, "lr": 0.0003, "acc": 0.123456})
	clock.set(26 * time.Second)
	p.Update(12, 1000, map[string]float64{"loss": 2.4}) // held, shown by Done
	p.Done()
	// 11 steps in 26s: 2363.636363ms each (to the nanosecond), 988 left: 2335.27s.
	want := "step 1/1000  loss 3\n" +
		"step 11/1000  loss 2.5  acc 0.1235  lr 0.0003  2500.0 ms/step  eta 41m13s\n" +
		"step 12/1000  loss 2.4  2363.6 ms/step  eta 38m55s\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestProgressPlainLastStepAndInterval(t *testing.T) {
	p, out, clock := newTestProgress(false)
	p.Interval = time.Second
	p.Update(1, 3, map[string]float64{"loss": 1})
	clock.set(999 * time.Millisecond)
	p.Update(2, 3, map[string]float64{"loss": 0.5}) // 0.999s < 1s: held
	clock.set(2 * time.Second)
	p.Update(3, 3, map[string]float64{"loss": 0.25}) // last step: always shown
	p.Done()                                         // nothing held back, no newline to end
	p.Done()
	clock.set(3 * time.Second)
	p.Update(4, 0, nil) // a new count after Done; no total, so no ETA
	clock.set(3500 * time.Millisecond)
	p.Update(5, 0, nil)
	clock.set(4500 * time.Millisecond)
	p.Update(7, 0, nil)
	p.Done()
	want := "step 1/3  loss 1\n" +
		"step 3/3  loss 0.25  1000.0 ms/step  elapsed 2s\n" +
		"step 4\n" +
		"step 7  500.0 ms/step\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestProgressTerminal(t *testing.T) {
	p, out, clock := newTestProgress(true)
	p.Interval = time.Hour // ignored on a terminal
	p.Update(1, 10, map[string]float64{"loss": 2.5})
	clock.set(50 * time.Millisecond)
	p.Update(2, 10, map[string]float64{"loss": 2.25}) // within 100ms: held
	clock.set(200 * time.Millisecond)
	// 2 steps in 200ms: 100ms/step; 7 left: 0.7s, rounded to 1s.
	p.Update(3, 10, map[string]float64{"loss": 2, "acc": 0.5})
	clock.set(299 * time.Millisecond)
	p.Update(4, 10, map[string]float64{"loss": 1.5}) // held
	clock.set(300 * time.Millisecond)
	p.Update(5, 10, map[string]float64{"loss": 1.25}) // 100ms since the last draw: shown
	clock.set(1 * time.Second)
	p.Update(10, 10, map[string]float64{"loss": 1.234567})
	p.Done()
	l1 := "step 1/10  loss 2.5"
	l2 := "step 3/10  loss 2  acc 0.5  100.0 ms/step  eta 1s"
	l3 := "step 5/10  loss 1.25  75.0 ms/step  eta 0s" // 300ms/4 steps; 5 left: 375ms
	l4 := "step 10/10  loss 1.235  111.1 ms/step  elapsed 1s"
	want := "\r" + l1 + "\r" + l2 + "\r" + l3 + strings.Repeat(" ", len(l2)-len(l3)) + "\r" + l4 + "\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestProgressTerminalDoneShowsHeld(t *testing.T) {
	p, out, clock := newTestProgress(true)
	p.Update(0, 4, map[string]float64{"loss": 9})
	clock.set(10 * time.Millisecond)
	p.Update(1, 4, map[string]float64{"loss": 8})
	p.Done()
	p.Done() // a second Done writes nothing
	want := "\rstep 0/4  loss 9\rstep 1/4  loss 8  10.0 ms/step  eta 0s\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestProgressConcurrent(t *testing.T) {
	p, out, _ := newTestProgress(false)
	p.Now = nil // the real clock
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 50 {
				p.Update(g*50+i, 200, map[string]float64{"loss": float64(i)})
			}
		})
	}
	wg.Wait()
	p.Done()
	if !strings.HasPrefix(out.String(), "step ") {
		t.Errorf("output %q", out.String())
	}
}

func TestFormatDuration(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{499 * time.Millisecond, "0s"},
		{500 * time.Millisecond, "1s"},
		{59*time.Second + 400*time.Millisecond, "59s"},
		{59*time.Second + 500*time.Millisecond, "1m00s"},
		{4*time.Minute + 5*time.Second, "4m05s"},
		{3599 * time.Second, "59m59s"},
		{3600 * time.Second, "1h00m00s"},
		{90061 * time.Second, "25h01m01s"},
	}
	for _, c := range cases {
		if got := FormatDuration(c.d); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) || NewProgress(f).Terminal {
		t.Error("a regular file counts as a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if IsTerminal(w) {
		t.Error("a pipe counts as a terminal")
	}
	if IsTerminal(nil) {
		t.Error("nil counts as a terminal")
	}
	if null, err := os.Open(os.DevNull); err == nil {
		defer null.Close()
		if IsTerminal(null) {
			t.Error("the null device counts as a terminal")
		}
	}
	// Other character devices count, as documented.
	if zero, err := os.Open("/dev/zero"); err == nil {
		defer zero.Close()
		if !IsTerminal(zero) {
			t.Error("/dev/zero, a character device, does not count as a terminal")
		}
	}
	if IsTerminal(f) != NewProgress(f).Terminal {
		t.Error("NewProgress does not follow IsTerminal")
	}
	if p := NewProgress(&strings.Builder{}); p.Terminal {
		t.Error("a non-file writer counts as a terminal")
	}
}

// TestProgressElapsedAcrossDone: after Done (a validation between two counts) ms/step starts again, and
// the elapsed time at the last step is the whole run's.
func TestProgressElapsedAcrossDone(t *testing.T) {
	p, out, clock := newTestProgress(false)
	p.Update(1, 4, nil)
	clock.set(2 * time.Second)
	p.Update(2, 4, nil)
	p.Done()
	clock.set(62 * time.Second) // a minute of validation
	p.Update(3, 4, nil)
	clock.set(64 * time.Second)
	p.Update(4, 4, nil)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if last != "step 4/4  2000.0 ms/step  elapsed 1m04s" {
		t.Errorf("last line %q, want 2000.0 ms/step (the second count's) and elapsed 1m04s (the run's)", last)
	}
}

// TestProgressLabelAndDelay: a label names what is counted; with a delay a count that ends sooner shows
// nothing, and a longer one starts showing once the delay has passed.
func TestProgressLabelAndDelay(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	p := &Progress{w: &b, Now: func() time.Time { return now }, Label: "window", Delay: 2 * time.Second}
	for i := 1; i <= 10; i++ { // a quick count: one second in all
		now = now.Add(100 * time.Millisecond)
		p.Update(i, 10, map[string]float64{"val_loss": 3})
	}
	p.Done()
	if b.Len() != 0 {
		t.Fatalf("a count quicker than the delay showed %q", b.String())
	}
	for i := 1; i <= 40; i++ { // a slow one: 4 seconds
		now = now.Add(100 * time.Millisecond)
		p.Update(i, 40, map[string]float64{"val_loss": 3})
	}
	p.Done()
	out := b.String()
	if !strings.HasPrefix(out, "window 2") || !strings.Contains(out, "ms/window") || !strings.Contains(out, "window 40/40") || strings.Contains(out, "step") {
		t.Fatalf("a count past the delay showed %q", out)
	}
}
