package emulator

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/memlimit"
	"github.com/anestar/anestar/mil"
)

// Kernel is a compiled program: the tensors its ops compute and the ops in order, with its own
// surfaces as its first Binding and the further bindings that Bind made.
type Kernel struct {
	Binding              // the kernel's own surfaces; its closed flag is the kernel's
	mu      sync.Mutex   // serialises Eval, Bind and Close of the kernel and all its bindings
	inT     []*tensor    // the input values, read from a binding's inputs at each Eval
	outT    []*tensor    // the output values, written to a binding's outputs after each Eval
	outSegs [][]ioPiece  // per output, the buffers its transfer writes (an output concat's parts)
	inSegs  [][]ioPiece  // per input, the buffers its transfer reads when not its tensor alone (input_views.go)
	steps   []step       // the ops, in order
	times   *kernelTimes // the steps' rows of Options.OpTimes; nil when nothing is clocked
	fp16    bool         // round results to fp16 (FP16)
	check   bool         // report the first result holding inf or NaN
	flops   float64      // floating-point operations per eval
	ar      *arena       // the backend's shared scratch and lock
	owned   [][]float32  // weights and constants, from the recycler, given back at Close
	scratch []*scratch   // the shared buffers it uses
	binds   []*Binding   // the open bindings made by Bind

	// What Bind needs to compile a binding's own plan when this one reads its inputs in place
	// (alias.go).
	inPlace bool               // an input read in place
	fn      *mil.Func          // main
	w       mil.Weights        // its weight files
	opts    Options            // the numerics
	fuse    bool               // op chains fused
	consts  map[string]*tensor // its constants, shared with the bindings' plans
}

var _ ane.Kernel = (*Kernel)(nil)

// FLOPs is the number of floating-point operations one Eval does (multiply-adds count two).
func (k *Kernel) FLOPs() float64 { return k.flops }

// run runs the steps once, on the values the caller has read into k.inT; n is the binding's eval count,
// for messages. The caller holds k.mu and k.ar.mu.
func (k *Kernel) run(ctx context.Context, n int) error {
	for i := range k.steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("emulator: eval %d: %w", n, err)
		}
		s := &k.steps[i]
		var t0 time.Time
		if k.times != nil {
			t0 = time.Now()
		}
		if s.run != nil {
			if err := s.run(); err != nil {
				return fmt.Errorf("emulator: eval %d: %w", n, opErr(s.op, "%w", err))
			}
		}
		if k.fp16 {
			for _, r := range s.round {
				parallel(r.n, roundGrain, r.fn)
			}
		}
		if k.times != nil {
			k.times.steps[i].add(time.Since(t0))
		}
		if k.check {
			if err := k.checkStep(s, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStep reports the first result of s that holds inf or NaN.
func (k *Kernel) checkStep(s *step, n int) error {
	for _, t := range s.outs {
		for i, v := range t.data {
			if f := float64(v); math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("emulator: %w", &ane.NumericsError{Eval: n, Line: s.op.Pos.Line, Kind: s.op.Kind,
					Op: s.result, Result: t.name, Value: v, Index: i, Shape: slices.Clone(t.shape)})
			}
		}
	}
	return nil
}

// Close releases the kernel, its surfaces and every binding Bind made: later Evals, and accesses to
// their surfaces, fail with an error wrapping ane.ErrClosed (closed_test.go checks every path). Its
// weight buffers and surface memory go to the backend's recycler for the next compiles (recycle.go),
// and its share of the shared scratch ends (scratch.go). Closing twice is harmless.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.ar.mu.Lock()
	defer k.ar.mu.Unlock()
	bytes := k.Binding.release()
	for _, b := range k.binds {
		bytes = append(bytes, b.release()...)
	}
	k.binds = nil
	k.ar.rec.give(k.owned, bytes)
	k.ar.release(k.scratch)
	k.steps, k.inT, k.outT, k.outSegs, k.inSegs, k.owned, k.scratch = nil, nil, nil, nil, nil, nil, nil
	return nil
}

// checkMemory refuses a program whose buffers cannot be allocated, before any is: the emulator holds
// every value as float32, so it needs at most 4 bytes per element of every input and op result (the
// planner reuses buffers, so usually less).
func checkMemory(fn *mil.Func) error {
	var elems uint64
	var big *mil.Var
	add := func(v *mil.Var) {
		if v == nil {
			return
		}
		n := uint64(max(v.Type.NumElements(), 0))
		elems += n
		if big == nil || n > uint64(max(big.Type.NumElements(), 0)) {
			big = v
		}
	}
	for _, in := range fn.Inputs {
		add(in)
	}
	for _, op := range fn.Ops {
		if op == nil {
			continue
		}
		for _, r := range op.Results {
			add(r)
		}
	}
	if big == nil {
		return nil
	}
	what := fmt.Sprintf("compiling %q (its largest value %s is %s)", fn.Name, big.Name, big.Type)
	return memlimit.Check(4*elems, what)
}
