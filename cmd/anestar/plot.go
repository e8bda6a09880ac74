package main

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/anestar/anestar/internal/atomicfile"
	"github.com/anestar/anestar/metrics"
)

func init() {
	register(command{
		name:    "plot",
		args:    "METRICS.jsonl...",
		summary: "draw metrics files (loss, accuracy, ...) as a chart",
		run:     runPlot,
	})
}

const plotHelp = `Usage: anestar plot METRICS.jsonl [more.jsonl ...] [flags]

Draws metrics files (JSON lines, one record per step or epoch, as training scripts
write them) on one chart. Each file is a run with its own colour and a legend entry
named after the file (its base name without the extension); with several --y keys,
each key has its own dash pattern (or, for a single file, its own colour). Each
series is drawn twice: the raw values as a thin light line, and over them a centred
moving average.

Flags:
  -o, --output FILE   where to write the chart; the extension picks the format:
                      .png, .svg, .pdf, .jpg, .tif or .eps
                      (default: the y keys joined by "-", then .png: loss.png)
      --y KEYS        the keys on the y axis, comma-separated or the flag repeated,
                      e.g. --y train_acc,test_acc (default loss)
      --x KEY         the key on the x axis (default: step if every series has it,
                      else epoch, else the line number in the file, which
                      --x line also asks for)
      --smooth N      moving-average window in points; 0 draws the raw values only
                      (default: about 1/25 of each series' points, and no smoothing
                      below 50 points)
      --logy          logarithmic y axis; values <= 0 are left out
      --title TEXT    a title over the chart (default none)
      --width PX      image width in pixels at 96 dpi (default 960)
      --height PX     image height in pixels at 96 dpi (default 600)
  -h, --help          show this help

Notes on stderr report lines that repeat an earlier step (a run resumed from a
checkpoint appends to the same file; the later values win), an incomplete last
line (left by a crash; ignored), and values left out (NaN, infinite, or <= 0
with --logy).

Exit status: 0 on success; 1 for a missing, empty or malformed file, a key that
a file lacks, or a failed write; 2 for a usage error.
`

// plotOptions are the parsed flags of anestar plot.
type plotOptions struct {
	files         []string // metrics files, one run each
	output        string   // chart file; its extension picks the format
	ys            []string // keys on the y axis
	x             string   // key on the x axis; "" chooses, "line" is the line number
	smooth        int      // moving-average span; -1 chooses per series, 0 none
	logy          bool     // logarithmic y axis
	title         string   // chart title
	width, height int      // image size in pixels at 96 dpi
}

// plotFormats are the output extensions gonum plot can write.
var plotFormats = map[string]bool{"png": true, "svg": true, "pdf": true, "jpg": true, "jpeg": true, "tif": true, "tiff": true, "eps": true}

func runPlot(args []string, stdout, stderr io.Writer) int {
	o, err := parsePlotFlags(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprint(stdout, plotHelp)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "anestar plot: %v\nRun 'anestar plot --help' for usage.\n", err)
		return exitUsage
	}
	p, _, err := buildPlot(o, stderr)
	if err == nil {
		err = savePlot(p, o)
	}
	if err != nil {
		fmt.Fprintf(stderr, "anestar plot: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "wrote %s\n", o.output)
	return exitOK
}

// parsePlotFlags parses and checks the command line; errors are usage errors.
func parsePlotFlags(args []string) (*plotOptions, error) {
	o := &plotOptions{}
	fs := plotFlags(o)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	o.files = fs.Args()
	switch {
	case len(o.files) == 0:
		return nil, errors.New("no metrics file given")
	case o.smooth < -1 || (o.smooth == -1 && fs.Changed("smooth")):
		return nil, fmt.Errorf("--smooth %d: want 0 (none) or a window of points", o.smooth)
	case o.width < 100 || o.width > 20000 || o.height < 100 || o.height > 20000:
		return nil, fmt.Errorf("--width %d --height %d: each must be 100 to 20000 pixels", o.width, o.height)
	}
	seen := map[string]bool{}
	for _, y := range o.ys {
		if y == "" {
			return nil, fmt.Errorf("--y %q: empty key", strings.Join(o.ys, ","))
		}
		if seen[y] {
			return nil, fmt.Errorf("--y: key %q given twice", y)
		}
		seen[y] = true
	}
	if len(o.ys) == 0 {
		return nil, errors.New("--y: no key given")
	}
	if o.output == "" {
		o.output = strings.Join(o.ys, "-") + ".png"
	}
	if ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(o.output), ".")); !plotFormats[ext] {
		return nil, fmt.Errorf("-o %s: unknown format %q; use .png, .svg, .pdf, .jpg, .tif or .eps", o.output, ext)
	}
	return o, nil
}

// plotFlags defines the flags of anestar plot, storing into o; plotHelp explains them.
func plotFlags(o *plotOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("plot", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVarP(&o.output, "output", "o", "", "chart file")
	fs.StringSliceVar(&o.ys, "y", []string{"loss"}, "y keys")
	fs.StringVar(&o.x, "x", "", "x key")
	fs.IntVar(&o.smooth, "smooth", -1, "moving-average span")
	fs.BoolVar(&o.logy, "logy", false, "logarithmic y axis")
	fs.StringVar(&o.title, "title", "", "title")
	fs.IntVar(&o.width, "width", 960, "width in pixels")
	fs.IntVar(&o.height, "height", 600, "height in pixels")
	return fs
}

// plotRun is one metrics file.
type plotRun struct {
	name   string // legend name
	series *metrics.Series
}

// plotSeries is one line of the chart, as drawn.
type plotSeries struct {
	name     string    // legend entry
	xs, ys   []float64 // the raw points, sorted by x
	smoothed []float64 // the moving average of ys, or nil
	span     int       // its window
	colour   int       // index into plotutil.DarkColors
}

// buildPlot reads the files and lays out the chart, writing notes about the data.
func buildPlot(o *plotOptions, notes io.Writer) (*plot.Plot, []plotSeries, error) {
	runs := make([]plotRun, len(o.files))
	names := runNames(o.files)
	for i, path := range o.files {
		s, err := metrics.Read(path)
		if err != nil {
			return nil, nil, err
		}
		if len(s.Records) == 0 {
			return nil, nil, fmt.Errorf("%s: no records", path)
		}
		if s.Truncated > 0 {
			fmt.Fprintf(notes, "anestar plot: note: %s:%d: incomplete last line ignored\n", path, s.Truncated)
		}
		if s.Superseded > 0 {
			fmt.Fprintf(notes, "anestar plot: note: %s: %d lines repeat an earlier step; the later values are drawn\n", path, s.Superseded)
		}
		for _, y := range o.ys {
			if err := checkKey(s, y); err != nil {
				if len(o.files) == 1 {
					return nil, nil, err
				}
				fmt.Fprintf(notes, "anestar plot: note: %v: its %s is left out\n", err, y) // plot what each file has
			}
		}
		runs[i] = plotRun{name: names[i], series: s}
	}
	for _, y := range o.ys { // but some file must have each key
		if !slices.ContainsFunc(runs, func(r plotRun) bool { return checkKey(r.series, y) == nil }) {
			return nil, nil, fmt.Errorf("no file has a numeric key %q; the first's keys are: %s", y, strings.Join(runs[0].series.Keys(), ", "))
		}
	}
	x, err := chooseX(o.x, runs, o.ys)
	if err != nil {
		return nil, nil, err
	}

	p := plot.New()
	p.Title.Text = o.title
	p.X.Label.Text = x
	if x == "" {
		p.X.Label.Text = "line"
	}
	p.Y.Label.Text = strings.Join(o.ys, ", ")
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	if o.logy {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = logTicks{}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)

	var rising, falling int // how the smoothed series trend, to place the legend
	var drawn []plotSeries
	for r, run := range runs {
		for k, y := range o.ys {
			xs, ys := run.series.Pairs(x, y)
			xs, ys, dropped := finitePoints(xs, ys, o.logy)
			if dropped > 0 {
				what := "NaN or infinite"
				if o.logy {
					what += " or <= 0"
				}
				fmt.Fprintf(notes, "anestar plot: note: %s: %d %s values of %s left out\n", run.series.Path, dropped, what, y)
			}
			if len(xs) == 0 {
				if len(runs) > 1 { // plot what each file has: the others may hold it
					fmt.Fprintf(notes, "anestar plot: note: %s has no value of %s to draw against %s: left out\n", run.series.Path, y, p.X.Label.Text)
					continue
				}
				return nil, nil, fmt.Errorf("%s: no value of %s to draw against %s", run.series.Path, y, p.X.Label.Text)
			}
			span := o.smooth
			if span < 0 {
				span = metrics.DefaultSpan(len(ys))
			}
			smooth := metrics.MovingAverage(ys, span)
			if trend(smooth, o.logy) > 0 {
				rising++
			} else {
				falling++
			}
			name := run.name
			switch {
			case len(o.ys) > 1 && len(runs) == 1:
				name = y
			case len(o.ys) > 1:
				name += " " + y
			}
			// A colour per run, and dashes per key; a colour per key for one run.
			ci := r
			if len(runs) == 1 {
				ci = k
			}
			c := plotutil.DarkColors[ci%len(plotutil.DarkColors)]
			var dashes []vg.Length
			if len(runs) > 1 && k > 0 {
				dashes = []vg.Length{vg.Points(2 + 3*float64(k)), vg.Points(2)}
			}
			top, err := addLines(p, xs, ys, smooth, span > 1, c, dashes)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %s: %w", run.series.Path, y, err)
			}
			p.Legend.Add(name, top)
			d := plotSeries{name: name, xs: xs, ys: ys, span: span, colour: ci}
			if span > 1 {
				d.smoothed = smooth
			}
			drawn = append(drawn, d)
		}
	}
	if o.logy && p.Y.Min == p.Y.Max {
		// gonum widens an empty range by ±1, which would reach below zero.
		p.Y.Min, p.Y.Max = p.Y.Min/2, p.Y.Max*2
	}
	p.Legend.Top = falling >= rising
	p.Legend.ThumbnailWidth = vg.Points(24)
	p.Legend.XOffs = -vg.Points(6) // keep clear of the last points and the axes
	p.Legend.YOffs = vg.Points(6)
	if p.Legend.Top {
		p.Legend.YOffs = -vg.Points(6)
	}

	return p, drawn, nil
}

// checkKey reports a key that a series lacks or that holds no numbers, listing
// the keys that are there.
func checkKey(s *metrics.Series, key string) error {
	if !s.Has(key) {
		return fmt.Errorf("%s has no key %q; its keys are: %s", s.Path, key, strings.Join(s.Keys(), ", "))
	}
	if len(s.Column(key)) == 0 {
		return fmt.Errorf("%s: key %q holds no numbers; numeric keys are: %s", s.Path, key, strings.Join(s.NumericKeys(), ", "))
	}
	return nil
}

// chooseX returns the x key: the one asked for, or step, or epoch, or "" (the line
// number) — the first that every series of every y key can be drawn against.
func chooseX(asked string, runs []plotRun, ys []string) (string, error) {
	usable := func(x string) bool {
		for _, r := range runs {
			for _, y := range ys {
				if checkKey(r.series, y) != nil {
					continue // a file without the key is left out of its lines
				}
				if xs, _ := r.series.Pairs(x, y); len(xs) == 0 {
					return false
				}
			}
		}
		return true
	}
	if asked == "" {
		for _, x := range []string{"step", "epoch"} {
			if usable(x) {
				return x, nil
			}
		}
		return "", nil
	}
	for _, r := range runs {
		if asked == "line" && !r.series.Has("line") {
			continue
		}
		if err := checkKey(r.series, asked); err != nil {
			return "", fmt.Errorf("--x: %w", err)
		}
	}
	if asked == "line" && !runs[0].series.Has("line") {
		return "", nil
	}
	return asked, nil
}

// runNames gives each file a legend name: its base name without the extension,
// or as much more of its path as it takes to tell the files apart (the whole
// path, when two share it).
func runNames(files []string) []string {
	names := make([]string, len(files))
	deepest := 1
	for _, f := range files {
		deepest = max(deepest, len(strings.Split(filepath.ToSlash(filepath.Clean(f)), "/")))
	}
	for depth := 1; depth <= deepest; depth++ {
		count := map[string]int{}
		for i, f := range files {
			parts := strings.Split(filepath.ToSlash(filepath.Clean(f)), "/")
			if len(parts) > depth {
				parts = parts[len(parts)-depth:]
			}
			name := strings.Join(parts, "/")
			names[i] = strings.TrimSuffix(name, filepath.Ext(name))
			count[names[i]]++
		}
		if len(count) == len(files) {
			break
		}
	}
	return names
}

// finitePoints sorts the points by x (stably) and drops those that cannot be
// drawn: non-finite values, and values <= 0 on a log axis.
func finitePoints(xs, ys []float64, logy bool) (fx, fy []float64, dropped int) {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	for _, i := range idx {
		x, y := xs[i], ys[i]
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) || (logy && y <= 0) {
			dropped++
			continue
		}
		fx, fy = append(fx, x), append(fy, y)
	}
	return fx, fy, dropped
}

// trend compares the mean of the last fifth of ys with that of the first fifth.
func trend(ys []float64, logy bool) float64 {
	k := max(1, len(ys)/5)
	mean := func(v []float64) float64 {
		s := 0.0
		for _, y := range v {
			if logy {
				y = math.Log(y)
			}
			s += y
		}
		return s / float64(len(v))
	}
	return mean(ys[len(ys)-k:]) - mean(ys[:k])
}

// addLines adds a series: the raw values thin and light, and the smoothed values
// over them when smoothed is set. It returns the line for the legend.
func addLines(p *plot.Plot, xs, ys, smooth []float64, smoothed bool, c color.Color, dashes []vg.Length) (*plotter.Line, error) {
	raw, err := plotter.NewLine(xyPoints(xs, ys))
	if err != nil {
		return nil, err
	}
	raw.Color = c
	raw.Width = vg.Points(1.25)
	raw.Dashes = dashes
	if !smoothed {
		p.Add(raw)
		return raw, nil
	}
	r, g, b, _ := c.RGBA()
	raw.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 80}
	raw.Width = vg.Points(0.6)
	raw.Dashes = nil
	top, err := plotter.NewLine(xyPoints(xs, smooth))
	if err != nil {
		return nil, err
	}
	top.Color = c
	top.Width = vg.Points(1.75)
	top.Dashes = dashes
	p.Add(raw, top)
	return top, nil
}

// niceTicks marks a linear axis every 1, 2 or 5 times a power of ten, whichever gives five to ten
// labels, with unlabelled minor ticks between; labels are as short as the values allow ("50", not
// "50.00"). (gonum's default ticks label few values and print them with fixed decimals.)
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	step := math.Pow10(int(math.Floor(math.Log10((hi - lo) / 5))))
	for _, m := range []float64{1, 2, 5, 10} {
		if (hi-lo)/(m*step) <= 10 {
			step *= m
			break
		}
	}
	minor := step / 5
	if step/math.Pow10(int(math.Floor(math.Log10(step)))) == 2 {
		minor = step / 4
	}
	var ticks []plot.Tick
	for i := math.Ceil(lo / minor); i*minor <= hi; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if k := math.Round(v / step); math.Abs(v-k*step) < minor/2 {
			t.Label = strconv.FormatFloat(k*step, 'g', 6, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// logTicks marks a log axis at 1, 2 and 5 times the powers of ten, or at the
// powers of ten alone when that would label more than ten ticks; the other
// integer multiples get unlabelled minor ticks. (gonum's LogTicks labels only
// powers of ten, which leaves a short axis with one label or none.)
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 0) {
		return nil
	}
	e0, e1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	labelled := map[int]bool{1: true, 2: true, 5: true}
	count := 0
	for e := e0; e <= e1; e++ {
		for m := range labelled {
			if v := float64(m) * math.Pow10(e); v >= lo && v <= hi {
				count++
			}
		}
	}
	if count > 10 {
		labelled = map[int]bool{1: true}
	}
	var ticks []plot.Tick
	for e := e0; e <= e1; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if labelled[m] {
				t.Label = strconv.FormatFloat(v, 'g', 6, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

func xyPoints(xs, ys []float64) plotter.XYs {
	pts := make(plotter.XYs, len(xs))
	for i := range xs {
		pts[i].X, pts[i].Y = xs[i], ys[i]
	}
	return pts
}

// savePlot renders the chart and writes it to o.output through a temporary file,
// so that a failure leaves no partial chart behind.
func savePlot(p *plot.Plot, o *plotOptions) (err error) {
	var buf bytes.Buffer
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("drawing the chart: %v", r)
			}
		}()
		const dpi = 96 // gonum plot's image resolution
		w := vg.Length(o.width) * vg.Inch / dpi
		h := vg.Length(o.height) * vg.Inch / dpi
		format := strings.ToLower(strings.TrimPrefix(filepath.Ext(o.output), "."))
		var c vg.CanvasWriterTo
		if c, err = draw.NewFormattedCanvas(w, h, format); err != nil {
			return
		}
		margin := vg.Points(10)
		p.Draw(draw.Crop(draw.New(c), margin, -margin, margin/2, -margin))
		_, err = c.WriteTo(&buf)
	}()
	if err != nil {
		return err
	}
	return atomicfile.Write(o.output, buf.Bytes(), 0o644)
}
