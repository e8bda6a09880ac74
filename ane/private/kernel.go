package private

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/anestar/anestar/ane"
)

// errClosed is returned by Eval after Close; it wraps ane.ErrClosed.
var errClosed = fmt.Errorf("ane eval: %w", ane.ErrClosed)

// Kernel is a program compiled and loaded on the ANE, with one IOSurface per input and output of main.
type Kernel struct {
	inputs  []*ane.Surface // main's inputs, in declaration order
	outputs []*ane.Surface // main's outputs, in return order

	mu     sync.Mutex       // serialises Eval and Close
	closed bool             // Close has run
	m      model            // the loaded model
	req    request          // the prepared request over mems
	mems   []*surfaceMemory // inputs then outputs
	// inOrder and outOrder bind the model's ports to the surfaces by name: port p of the model is
	// input inOrder[p] (output outOrder[p]); a request passes its surfaces in that order.
	inOrder, outOrder []int
	dir               string // staging directory, shared through stagedDirs
}

var _ ane.Kernel = (*Kernel)(nil)

// Inputs are the surfaces of main's inputs, in declaration order.
func (k *Kernel) Inputs() []*ane.Surface { return k.inputs }

// Outputs are the surfaces of main's outputs, in return order.
func (k *Kernel) Outputs() []*ane.Surface { return k.outputs }

// Eval runs the program once on the ANE. It reads the input surfaces and writes the output surfaces. The
// request and selectors were prepared at compile time, so Eval looks nothing up and uses no reflection.
// The ANE call itself cannot be interrupted: ctx is checked before it starts.
func (k *Kernel) Eval(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("ane eval: %w", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return errClosed
	}
	if err := k.req.eval(); err != nil {
		return fmt.Errorf("ane eval: %w", err)
	}
	return nil
}

// Close unloads the model, releases the request, the model and the surfaces, and removes the staging
// directory when no other kernel uses it. Later calls to Eval fail; a second Close does nothing.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	k.req.release()
	var errs []error
	if err := k.m.unload(); err != nil {
		errs = append(errs, fmt.Errorf("ane close: %w", err))
	}
	k.m.release()
	for _, m := range k.mems {
		m.release()
	}
	if err := stagedDirs.release(k.dir); err != nil {
		errs = append(errs, fmt.Errorf("ane close: %w", err))
	}
	return errors.Join(errs...)
}
