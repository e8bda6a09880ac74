// Package memlimit says how much memory the process can still allocate, so that an allocation that
// cannot succeed is refused with an error naming its size: Go's runtime aborts the process, beyond
// the reach of recover, when the operating system refuses it memory (a ulimit -v, a small machine).
// Tensor creation and the emulator's compile check their sizes here, and package cpu checks the room
// OpenBLAS needs before it loads it. Resident says how much the process holds, for the memory figures
// of scripts (process.memory).
package memlimit

import "fmt"

// AddressSpaceLeft returns how many bytes the process may still map under its address-space limit
// (RLIMIT_AS, `ulimit -v`), and whether it has one (read on Linux only).
func AddressSpaceLeft() (uint64, bool) { return addressSpaceLeft() }

// Available returns about how many more bytes the process can allocate: the least of the address
// space left under its limit (RLIMIT_AS) and the machine's memory and swap. ok is false where
// neither is known.
func Available() (n uint64, ok bool) { return available() }

// Small is the size below which Check does not look: looking costs a system call and a read of
// /proc (about 1.5 us), many times a small model's token, and an allocation that small cannot be
// the one that exhausts a machine a check would save.
const Small = 1 << 20

// Check returns an error when bytes cannot be allocated, saying what needs them (what) and how
// much is available; nil when they fit, are fewer than Small, or nothing is known.
func Check(bytes uint64, what string) error {
	if bytes < Small {
		return nil
	}
	n, ok := Available()
	if !ok || bytes <= n {
		return nil
	}
	return fmt.Errorf("%s needs %d bytes; about %d can be allocated here (the machine's memory, or ulimit -v)", what, bytes, n)
}
