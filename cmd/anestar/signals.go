package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
)

// exitTerminated is the exit code after SIGTERM (128 + 15), as exitInterrupted is after SIGINT.
const exitTerminated = 143

// interrupts turns the first SIGINT or SIGTERM into a stop request that a script sees through
// process.interrupted() (or, for a script that never polls it, a cancelled context), and the
// second into an immediate exit that first removes the temporary file of a save in progress.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	stop   *builtins.Stop
	ch     chan os.Signal
	mu     sync.Mutex
	first  os.Signal // nil until a signal arrives
	done   chan struct{}
}

// exitNow is os.Exit; a variable for tests.
var exitNow = os.Exit

// restartedEnv marks a process that process.exec started: it catches SIGINT and SIGTERM from its
// first moment (init), since its run is already under way, and hands them to watchInterrupts.
const restartedEnv = "ANESTAR_RESTARTED"

// early receives the signals of a restarted process until its run watches them.
var early chan os.Signal

func init() {
	if os.Getenv(restartedEnv) != "" {
		early = make(chan os.Signal, 2)
		signal.Notify(early, os.Interrupt, syscall.SIGTERM)
	}
}

// watchInterrupts starts handling SIGINT and SIGTERM; call release when the run ends.
func watchInterrupts(stderr io.Writer) *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, stop: &builtins.Stop{}, ch: make(chan os.Signal, 2), done: make(chan struct{})}
	if early != nil {
		in.ch, early = early, nil // with any signal that came during start-up
	} else {
		signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	}
	go func() {
		var sig os.Signal
		select {
		case sig = <-in.ch:
		case <-in.done:
			return
		}
		in.mu.Lock()
		in.first = sig
		in.mu.Unlock()
		if in.stop.Request() {
			fmt.Fprintf(stderr, "\nanestar: %s: stopping at the end of this step to save a checkpoint (again to exit at once)\n", sigName(sig))
		} else {
			in.cancel()
		}
		select {
		case sig2 := <-in.ch:
			ckpt.RemoveTemps()
			fmt.Fprintf(stderr, "\nanestar: %s again: exiting at once; nothing saved since the last checkpoint\n", sigName(sig2))
			exitNow(exitCode(sig))
		case <-in.done:
		}
	}()
	return in
}

// beforeExec hands SIGINT and SIGTERM back to their default action for the restart: from here on one
// ends the process, with the checkpoint process.exec's caller saved intact, instead of being caught
// by a handler that the exec is about to discard. A signal caught already stops the restart.
func (in *interrupts) beforeExec() error {
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	if in.signal() == nil && len(in.ch) == 0 {
		return nil
	}
	for i := 0; i < 100 && in.signal() == nil; i++ {
		time.Sleep(time.Millisecond) // let the watcher record the signal it is taking
	}
	in.afterFailedExec()
	return fmt.Errorf("%w: not restarting", builtins.ErrInterrupted)
}

// afterFailedExec catches the signals again when the restart did not happen.
func (in *interrupts) afterFailedExec() {
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
}

// signal returns the first signal received, or nil.
func (in *interrupts) signal() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.first
}

// release stops the handling.
func (in *interrupts) release() {
	signal.Stop(in.ch)
	close(in.done)
	in.cancel()
}

// report writes the line that ends an interrupted run, naming the checkpoint it saved, and
// returns the exit code.
func (in *interrupts) report(stderr io.Writer, res *builtins.Result, resume bool) int {
	sig := in.signal()
	switch {
	case res != nil && res.Checkpoint != "":
		fmt.Fprintf(stderr, "anestar: interrupted (%s); checkpoint at %s (step %d): continue with --resume\n", sigName(sig), res.Checkpoint, res.CheckpointStep)
	case resume:
		fmt.Fprintf(stderr, "anestar: interrupted (%s) while resuming; the checkpoint it resumes from is unchanged: continue with --resume\n", sigName(sig))
	default:
		fmt.Fprintf(stderr, "anestar: interrupted (%s); no checkpoint was saved by this run\n", sigName(sig))
	}
	return exitCode(sig)
}

func sigName(sig os.Signal) string {
	if sig == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func exitCode(sig os.Signal) int {
	if sig == syscall.SIGTERM {
		return exitTerminated
	}
	return exitInterrupted
}
