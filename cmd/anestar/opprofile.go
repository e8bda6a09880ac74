package main

import (
	"fmt"
	"os"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
)

// clockOps sets the emulator backend b to clock each op of the kernels it compiles (--op-profile) and
// returns the function that writes the table to path when the run ends. The file is made now, so
// that a path that cannot be written fails before the run.
func clockOps(b ane.Backend, path string) (func() error, error) {
	e, ok := b.(*emulator.Backend)
	if !ok {
		return nil, fmt.Errorf("the %s backend does not time its ops: only the emulator does (--backend emulator)", b.Name())
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, pathError(err)
	}
	t := &emulator.OpTimes{}
	e.ClockOps(t)
	return func() error {
		fmt.Fprintf(f, "# the emulator's time per op of each kernel, this process (a run that restarts itself starts a new table); emulator options: %s\n", e.Options())
		_, err := t.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}
