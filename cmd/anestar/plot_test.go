package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot/plotutil"

	"github.com/anestar/anestar/metrics"
)

// writeRun writes a metrics file of n steps whose loss decays from 3 with a
// deterministic wiggle, plus the given extra lines.
func writeRun(t *testing.T, dir, name string, n int, rate float64, extra ...string) string {
	t.Helper()
	var b strings.Builder
	for s := 1; s <= n; s++ {
		loss := 3*math.Exp(-float64(s)*rate) + 0.2 + 0.1*math.Sin(float64(s)*1.7)
		fmt.Fprintf(&b, "{\"step\":%d,\"loss\":%g,\"ms\":%d}\n", s, loss, 200+s%7)
	}
	for _, l := range extra {
		b.WriteString(l)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runPlotArgs(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = runPlot(args, &o, &e)
	return code, o.String(), e.String()
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// colourCounts counts the pixels of each colour, alpha included.
func colourCounts(img image.Image) map[color.NRGBA]int {
	counts := map[color.NRGBA]int{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			counts[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)]++
		}
	}
	return counts
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

func TestPlotPNG(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "fast.jsonl", 400, 1.0/80)
	b := writeRun(t, dir, "slow.jsonl", 300, 1.0/150)
	out := filepath.Join(dir, "loss.png")
	code, stdout, stderr := runPlotArgs(a, b, "-o", out, "--title", "loss", "--width", "640", "--height", "400")
	if code != exitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if stdout != "wrote "+out+"\n" {
		t.Errorf("stdout %q", stdout)
	}
	img := decodePNG(t, out)
	if got := img.Bounds().Size(); got != image.Pt(640, 400) {
		t.Errorf("size %v, want 640x400", got)
	}
	counts := colourCounts(img)
	if len(counts) < 20 {
		t.Errorf("only %d distinct colours: blank chart?", len(counts))
	}
	// Each run's smoothed line is drawn in its full colour, on top of everything.
	for i, name := range []string{"fast", "slow"} {
		c := nrgba(plotutil.DarkColors[i])
		if counts[c] < 200 {
			t.Errorf("run %s: %d pixels of its colour %v, want a drawn line", name, counts[c], c)
		}
	}
	if white := counts[color.NRGBA{255, 255, 255, 255}]; white < 640*400/2 {
		t.Errorf("%d white pixels: background not mostly white", white)
	}
}

// TestPlotSeries checks what buildPlot lays out: the legend names, the points
// in x order, and the moving average against window means computed here.
func TestPlotSeries(t *testing.T) {
	dir := t.TempDir()
	fast := writeRun(t, dir, "fast.jsonl", 400, 1.0/80)
	slow := writeRun(t, dir, "slow.jsonl", 30, 1.0/150, "{\"step\":0,\"loss\":9}\n")
	windowMean := func(ys []float64, i, h int) float64 {
		lo, hi := max(0, i-h), min(len(ys), i+h+1)
		sum := 0.0
		for _, y := range ys[lo:hi] {
			sum += y
		}
		return sum / float64(hi-lo)
	}
	cases := []struct {
		args    []string
		names   []string
		spans   []int
		colours []int
	}{
		{[]string{fast, slow}, []string{"fast", "slow"}, []int{17, 1}, []int{0, 1}}, // 400/25 = 16, made odd; 31 points: none
		{[]string{fast, slow, "--smooth", "0"}, []string{"fast", "slow"}, []int{0, 0}, []int{0, 1}},
		{[]string{fast, slow, "--smooth", "5"}, []string{"fast", "slow"}, []int{5, 5}, []int{0, 1}},
		{[]string{fast, "--y", "loss,ms"}, []string{"loss", "ms"}, []int{17, 17}, []int{0, 1}},
		{[]string{fast, slow, "--y", "ms,loss"}, []string{"fast ms", "fast loss", "slow ms", "slow loss"}, []int{17, 17, 1, 1}, []int{0, 0, 1, 1}},
	}
	for _, c := range cases {
		o, err := parsePlotFlags(c.args)
		if err != nil {
			t.Fatal(err)
		}
		var notes bytes.Buffer
		_, drawn, err := buildPlot(o, &notes)
		if err != nil || notes.Len() > 0 {
			t.Fatalf("%q: %v, notes %q", c.args, err, notes.String())
		}
		if len(drawn) != len(c.names) {
			t.Fatalf("%q: %d series, want %d", c.args, len(drawn), len(c.names))
		}
		for i, d := range drawn {
			if d.name != c.names[i] || d.span != c.spans[i] || d.colour != c.colours[i] {
				t.Errorf("%q: series %d is %q with span %d, colour %d; want %q with %d, %d",
					c.args, i, d.name, d.span, d.colour, c.names[i], c.spans[i], c.colours[i])
			}
			for k := 1; k < len(d.xs); k++ {
				if d.xs[k] <= d.xs[k-1] {
					t.Fatalf("%q: %s: x not increasing at %d: %v", c.args, d.name, k, d.xs[k-1:k+1])
				}
			}
			if d.span <= 1 {
				if d.smoothed != nil {
					t.Errorf("%q: %s: smoothed with span %d", c.args, d.name, d.span)
				}
				continue
			}
			for _, k := range []int{0, 3, len(d.ys) / 2, len(d.ys) - 1} {
				if want := windowMean(d.ys, k, d.span/2); math.Abs(d.smoothed[k]-want) > 1e-12*math.Abs(want) {
					t.Errorf("%q: %s: smoothed[%d] = %g, want %g", c.args, d.name, k, d.smoothed[k], want)
				}
			}
		}
	}
	// The step-0 line, last in the file, is drawn first.
	o, _ := parsePlotFlags([]string{slow})
	if _, drawn, _ := buildPlot(o, io.Discard); drawn[0].xs[0] != 0 || drawn[0].ys[0] != 9 {
		t.Errorf("first point (%g, %g), want (0, 9)", drawn[0].xs[0], drawn[0].ys[0])
	}
}

func TestPlotEpochsAndSeveralKeys(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	var b strings.Builder
	for e := 1; e <= 12; e++ {
		fmt.Fprintf(&b, "{\"epoch\":%d,\"loss\":%g,\"train_acc\":%g,\"test_acc\":%g}\n", e, 1/float64(e), 1-0.5/float64(e), 1-0.6/float64(e))
	}
	if err := os.WriteFile("mnist.jsonl", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runPlotArgs("mnist.jsonl", "--y", "train_acc,test_acc", "--width", "400", "--height", "250")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "wrote train_acc-test_acc.png\n" {
		t.Errorf("stdout %q", stdout)
	}
	counts := colourCounts(decodePNG(t, "train_acc-test_acc.png"))
	for i := range 2 {
		if c := nrgba(plotutil.DarkColors[i]); counts[c] < 100 {
			t.Errorf("key %d: %d pixels of colour %v", i, counts[c], c)
		}
	}
	// The same with the flag repeated, as SVG.
	if code, _, stderr := runPlotArgs("mnist.jsonl", "--y", "train_acc", "--y", "test_acc", "-o", "acc.svg"); code != exitOK {
		t.Fatalf("svg: exit %d: %s", code, stderr)
	}
	svg, _ := os.ReadFile("acc.svg")
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("test_acc")) || !bytes.Contains(svg, []byte("epoch")) {
		t.Errorf("SVG lacks the chart, the legend or the x label:\n%.300s", svg)
	}
}

func TestPlotNotes(t *testing.T) {
	dir := t.TempDir()
	// A resumed run repeating steps 9 and 10, a NaN loss, and a line cut by a crash.
	a := writeRun(t, dir, "resumed.jsonl", 10, 0.1,
		"{\"step\":9,\"loss\":0.5}\n{\"step\":10,\"loss\":0.4}\n{\"step\":11,\"loss\":NaN}\n{\"step\":12,\"lo")
	out := filepath.Join(dir, "n.png")
	code, _, stderr := runPlotArgs(a, "-o", out, "--width", "200", "--height", "150")
	want := "anestar plot: note: " + a + ":14: incomplete last line ignored\n" +
		"anestar plot: note: " + a + ": 2 lines repeat an earlier step; the later values are drawn\n" +
		"anestar plot: note: " + a + ": 1 NaN or infinite values of loss left out\n"
	if code != exitOK || stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, stderr, want)
	}
	// On a log axis, values <= 0 are left out too; with none left it is an error.
	b := filepath.Join(dir, "neg.jsonl")
	os.WriteFile(b, []byte("{\"step\":1,\"loss\":-1}\n{\"step\":2,\"loss\":0}\n{\"step\":3,\"loss\":0.5}\n"), 0o644)
	code, _, stderr = runPlotArgs(b, "-o", out, "--logy", "--width", "200", "--height", "150")
	if code != exitOK || stderr != "anestar plot: note: "+b+": 2 NaN or infinite or <= 0 values of loss left out\n" {
		t.Errorf("log axis: exit %d, stderr %q", code, stderr)
	}
	os.WriteFile(b, []byte("{\"step\":1,\"loss\":-1}\n"), 0o644)
	code, _, stderr = runPlotArgs(b, "-o", out, "--logy", "--width", "200", "--height", "150")
	if code != exitError || !strings.HasSuffix(stderr, "anestar plot: "+b+": no value of loss to draw against step\n") {
		t.Errorf("nothing drawable: exit %d, stderr %q", code, stderr)
	}
}

func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeRun(t, dir, "good.jsonl", 20, 0.1)
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, []byte("\n\n"), 0o644)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"step\":1,\"loss\":1}\n{\"step\":2,\"loss\":}\n"), 0o644)
	strs := filepath.Join(dir, "strs.jsonl")
	os.WriteFile(strs, []byte("{\"step\":1,\"loss\":\"high\",\"acc\":0.5}\n"), 0o644)
	missing := filepath.Join(dir, "none.jsonl")
	out := filepath.Join(dir, "out.png")
	cases := []struct {
		args []string
		code int
		msg  string // the stderr must contain this
	}{
		{nil, exitUsage, "no metrics file given"},
		{[]string{"--bogus", good}, exitUsage, "unknown flag: --bogus"},
		{[]string{good, "--smooth", "-2"}, exitUsage, "--smooth -2"},
		{[]string{good, "--smooth", "-1"}, exitUsage, "--smooth -1"},
		{[]string{good, "--smooth", "x"}, exitUsage, "--smooth"},
		{[]string{good, "--width", "5"}, exitUsage, "--width 5"},
		{[]string{good, "--y", ""}, exitUsage, "--y: no key given"},
		{[]string{good, "--y", "loss,,ms"}, exitUsage, "empty key"},
		{[]string{good, "--y", "loss,loss"}, exitUsage, `key "loss" given twice`},
		{[]string{good, "-o", "chart.gif"}, exitUsage, `unknown format "gif"`},
		{[]string{missing, "-o", out}, exitError, "none.jsonl: no such file"},
		{[]string{empty, "-o", out}, exitError, empty + ": no records"},
		{[]string{good, bad, "-o", out}, exitError, bad + ":2:18: bad value for \"loss\""},
		{[]string{good, "--y", "acc", "-o", out}, exitError, good + ` has no key "acc"; its keys are: step, loss, ms`},
		{[]string{strs, "-o", out}, exitError, strs + `: key "loss" holds no numbers; numeric keys are: step, acc`},
		{[]string{good, "--x", "epoch", "-o", out}, exitError, `--x: ` + good + ` has no key "epoch"; its keys are: step, loss, ms`},
		{[]string{good, "-o", filepath.Join(dir, "no", "dir", "x.png"), "--width", "200", "--height", "150"}, exitError, "no such file"},
	}
	for _, c := range cases {
		code, stdout, stderr := runPlotArgs(c.args...)
		if code != c.code || !strings.Contains(stderr, c.msg) || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d and %q", c.args, code, stdout, stderr, c.code, c.msg)
		}
		if c.code == exitUsage && !strings.Contains(stderr, "anestar plot --help") {
			t.Errorf("%q: usage error without a pointer to --help: %q", c.args, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed plot left %s behind", out)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".plot-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestPlotHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"x.jsonl", "--help"}} {
		code, stdout, stderr := runPlotArgs(args...)
		if code != exitOK || stdout != plotHelp || stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	// Every flag is explained.
	plotFlags(&plotOptions{}).VisitAll(func(f *pflag.Flag) {
		if !strings.Contains(plotHelp, "--"+f.Name+" ") {
			t.Errorf("help does not explain --%s", f.Name)
		}
		if f.Shorthand != "" && !strings.Contains(plotHelp, "-"+f.Shorthand+", --"+f.Name) {
			t.Errorf("help does not show -%s", f.Shorthand)
		}
	})
	var out bytes.Buffer
	if code := dispatch([]string{"help", "plot"}, &out, &out); code != exitOK || out.String() != plotHelp {
		t.Errorf("anestar help plot: exit %d", code)
	}
}

func TestChooseX(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	steps := file("steps.jsonl", "{\"step\":1,\"epoch\":0,\"loss\":2}\n{\"step\":2,\"epoch\":0,\"loss\":1}\n")
	epochs := file("epochs.jsonl", "{\"epoch\":1,\"loss\":2}\n{\"epoch\":2,\"loss\":1}\n")
	plain := file("plain.jsonl", "{\"loss\":2}\n{\"loss\":1}\n")
	cases := []struct {
		files []string
		want  string
	}{
		{[]string{steps}, "step"},
		{[]string{steps, epochs}, "epoch"},
		{[]string{epochs}, "epoch"},
		{[]string{steps, plain}, ""},
	}
	for _, c := range cases {
		var runs []plotRun
		for _, f := range c.files {
			s, err := metrics.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, plotRun{series: s})
		}
		if got, err := chooseX("", runs, []string{"loss"}); err != nil || got != c.want {
			t.Errorf("%v: x = %q, %v; want %q", c.files, got, err, c.want)
		}
		if got, err := chooseX("line", runs, []string{"loss"}); err != nil || got != "" {
			t.Errorf("%v: --x line gives %q, %v", c.files, got, err)
		}
	}
}

func TestRunNames(t *testing.T) {
	cases := []struct{ files, want []string }{
		{[]string{"a/run.jsonl"}, []string{"run"}},
		{[]string{"x/a.jsonl", "y/b.json"}, []string{"a", "b"}},
		{[]string{"lr1/m.jsonl", "lr2/m.jsonl"}, []string{"lr1/m", "lr2/m"}},
		{[]string{"m.jsonl", "sub/m.jsonl"}, []string{"m", "sub/m"}},
		{[]string{"m", "m"}, []string{"m", "m"}},
		{[]string{"x/a/b/c/m.jsonl", "y/a/b/c/m.jsonl"}, []string{"x/a/b/c/m", "y/a/b/c/m"}}, // as deep as it takes
	}
	for _, c := range cases {
		if got := runNames(c.files); !reflect.DeepEqual(got, c.want) {
			t.Errorf("runNames(%q) = %q, want %q", c.files, got, c.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) (lab []string, minor int) {
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Label == "" {
				minor++
			} else {
				lab = append(lab, tk.Label)
			}
		}
		return lab, minor
	}
	if lab, minor := labels(0.15, 3.5); !reflect.DeepEqual(lab, []string{"0.2", "0.5", "1", "2"}) || minor != 7 {
		t.Errorf("0.15..3.5: labels %q, %d minor ticks", lab, minor)
	}
	if lab, _ := labels(1e-6, 10); !reflect.DeepEqual(lab, []string{"1e-06", "1e-05", "0.0001", "0.001", "0.01", "0.1", "1", "10"}) {
		t.Errorf("1e-6..10: labels %q", lab)
	}
	if ticks := (logTicks{}).Ticks(-1, 1); ticks != nil {
		t.Errorf("non-positive range gave %v", ticks)
	}
}

func TestFinitePoints(t *testing.T) {
	xs := []float64{3, 1, 2, 5, 4, math.NaN()}
	ys := []float64{30, 10, math.Inf(1), -50, 0, 7}
	fx, fy, dropped := finitePoints(xs, ys, false)
	if !reflect.DeepEqual(fx, []float64{1, 3, 4, 5}) || !reflect.DeepEqual(fy, []float64{10, 30, 0, -50}) || dropped != 2 {
		t.Errorf("linear: %v %v dropped %d", fx, fy, dropped)
	}
	fx, fy, dropped = finitePoints(xs, ys, true)
	if !reflect.DeepEqual(fx, []float64{1, 3}) || !reflect.DeepEqual(fy, []float64{10, 30}) || dropped != 4 {
		t.Errorf("log: %v %v dropped %d", fx, fy, dropped)
	}
}

// TestNiceTicks checks the labels of a linear axis: round steps of 1, 2 or 5 times a power of ten, five
// to ten of them, printed without needless decimals.
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 299, "0 50 100 150 200 250"},
		{0.0004, 0.021, "0.005 0.01 0.015 0.02"},
		{-3, 3, "-3 -2 -1 0 1 2 3"},
		{1, 1, ""},
	} {
		var labels []string
		for _, tk := range (niceTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if got := strings.Join(labels, " "); got != c.want {
			t.Errorf("ticks(%g, %g) labelled %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

// TestPlotWhatEachHas: of two files, one without the key asked for is left out with a note and the
// other is drawn; when no file has it the plot fails naming the key.
func TestPlotWhatEachHas(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.MkdirAll(filepath.Join(dir, "b"), 0o755)
	withVal := writeRun(t, filepath.Join(dir, "a"), "metrics.jsonl", 20, 0.1, "{\"step\":10,\"val_loss\":2.5}\n{\"step\":20,\"val_loss\":2.1}\n")
	without := writeRun(t, filepath.Join(dir, "b"), "metrics.jsonl", 20, 0.1)
	out := filepath.Join(dir, "v.png")
	code, _, stderr := runPlotArgs(withVal, without, "--y", "val_loss", "-o", out)
	if code != 0 || !strings.Contains(stderr, without+` has no key "val_loss"`) {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("no chart: %v", err)
	}
	code, _, stderr = runPlotArgs(withVal, without, "--y", "acc", "-o", out)
	if code != exitError || !strings.Contains(stderr, `no file has a numeric key "acc"`) {
		t.Errorf("no file with the key: exit %d, stderr %q", code, stderr)
	}
}
