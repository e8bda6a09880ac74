//go:build !linux

package cpu

// readAddressSpaceLeft reports no address-space limit: it is read on Linux only.
func readAddressSpaceLeft() (uint64, bool) { return 0, false }
