package emulator

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/anestar/anestar/mil"
)

// Op times. With Options.OpTimes set, every Eval clocks each step of its plan (an op, or a chain of
// elementwise ops run as one: chain.go) and its surface transfers, and adds the time to the step's
// row: which op of which kernel a run's time goes to, on the emulator. A kernel is named by what it
// outputs (a packed program's parts), so the layers of a model that share a kernel, and the bindings
// that have plans of their own (alias.go), add up in one set of rows. The clock costs two readings a
// step; without OpTimes nothing is read.

// OpTimes collects the time of the steps of the kernels compiled with it. Its methods may be called
// while kernels evaluate.
type OpTimes struct {
	mu   sync.Mutex
	rows []*opTime
}

// opTime is one step's row: its totals, added to as evals run.
type opTime struct {
	kernel string // the kernel's name: its outputs
	order  int    // the step's place: -1 the input transfers, len(steps) the output transfers
	what   string // the op's kind, or "chain of N from KIND", "inputs", "outputs"
	result string // the step's (last) result
	evals  atomic.Int64
	nanos  atomic.Int64
}

// add counts one eval of d.
func (r *opTime) add(d time.Duration) {
	r.evals.Add(1)
	r.nanos.Add(int64(d))
}

// kernelTimes are a compiled plan's rows.
type kernelTimes struct {
	in, out *opTime
	steps   []*opTime
}

// register adds the rows of a plan of the kernel of fn with the given steps.
func (t *OpTimes) register(fn *mil.Func, steps []step) *kernelTimes {
	name := kernelName(fn)
	kt := &kernelTimes{
		in:  &opTime{kernel: name, order: -1, what: "inputs"},
		out: &opTime{kernel: name, order: len(steps), what: "outputs"},
	}
	for i, s := range steps {
		r := &opTime{kernel: name, order: i, result: s.result}
		switch {
		case s.op == nil:
			r.what = "?"
		case s.chain > 1:
			r.what = fmt.Sprintf("chain of %d from %s", s.chain, s.op.Kind)
		default:
			r.what = s.op.Kind
		}
		kt.steps = append(kt.steps, r)
	}
	t.mu.Lock()
	t.rows = append(t.rows, kt.in)
	t.rows = append(t.rows, kt.steps...)
	t.rows = append(t.rows, kt.out)
	t.mu.Unlock()
	return kt
}

// kernelName names the kernel of fn by its outputs: the parts of a packed output (the values its
// concat joins), else the outputs themselves.
func kernelName(fn *mil.Func) string {
	var names []string
	for _, o := range fn.Outputs {
		names = append(names, o.Name)
	}
	if len(fn.Outputs) == 1 {
		for _, op := range fn.Ops {
			if op == nil || op.Kind != "concat" || len(op.Results) == 0 || op.Results[0].Name != fn.Outputs[0].Name {
				continue
			}
			var parts []string
			if a := op.Arg("values"); a != nil {
				for _, o := range a.Operands {
					if o.Ref != nil {
						parts = append(parts, o.Ref.Name)
					}
				}
			}
			if len(parts) > 0 {
				names = parts
			}
		}
	}
	return strings.Join(names, ",")
}

// WriteTo writes the rows as a table, the most time first: per kernel and step, the evals, the total
// and per-eval milliseconds and the share of all the time clocked. Rows of one kernel's step from
// several plans are summed; steps never evaluated are left out.
func (t *OpTimes) WriteTo(w io.Writer) (int64, error) {
	type key struct {
		kernel, what, result string
		order                int
	}
	type sum struct {
		key
		evals, nanos int64
	}
	t.mu.Lock()
	sums := map[key]*sum{}
	var order []key
	var all int64
	for _, r := range t.rows {
		k := key{r.kernel, r.what, r.result, r.order}
		s := sums[k]
		if s == nil {
			s = &sum{key: k}
			sums[k] = s
			order = append(order, k)
		}
		s.evals += r.evals.Load()
		s.nanos += r.nanos.Load()
		all += r.nanos.Load()
	}
	t.mu.Unlock()
	var rows []*sum
	for _, k := range order {
		if s := sums[k]; s.evals > 0 {
			rows = append(rows, s)
		}
	}
	slices.SortStableFunc(rows, func(a, b *sum) int {
		switch {
		case a.nanos > b.nanos:
			return -1
		case a.nanos < b.nanos:
			return 1
		}
		return 0
	})
	cw := &countWriter{w: w}
	tw := tabwriter.NewWriter(cw, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "total ms\tshare\tevals\tms/eval\tkernel (outputs)\tstep\top\tresult\n")
	for _, s := range rows {
		fmt.Fprintf(tw, "%.3f\t%.1f%%\t%d\t%.4f\t%s\t%d\t%s\t%s\n", float64(s.nanos)/1e6, 100*float64(s.nanos)/float64(max(all, 1)),
			s.evals, float64(s.nanos)/1e6/float64(s.evals), s.kernel, s.order, s.what, s.result)
	}
	if err := tw.Flush(); err != nil {
		return cw.n, err
	}
	return cw.n, cw.err
}

// countWriter counts the bytes written through it and keeps the first error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if c.err == nil {
		c.err = err
	}
	return n, err
}
