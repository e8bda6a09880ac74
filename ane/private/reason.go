package private

import (
	"fmt"
	"strconv"
	"strings"
)

// platformReason says why the backend cannot run on goos/goarch, or returns nil on darwin/arm64, the
// only platform with an Apple Neural Engine and its framework.
func platformReason(goos, goarch string) error {
	if goos == "darwin" && goarch == "arm64" {
		return nil
	}
	return fmt.Errorf("not darwin/arm64 (this is %s/%s)", goos, goarch)
}

// loadStage names the step of loading the Apple frameworks that failed.
type loadStage uint8

// The loading steps, in the order they run.
const (
	stageFramework loadStage = iota // dlopen of a framework or library
	stageSymbol                     // dlsym of a function or constant
	stageClass                      // objc_getClass of a private class
	stageMethod                     // a class that lacks a method the backend sends
)

// loadError is why the Apple frameworks could not be prepared on a Mac. Its message is what
// `anestar backends` and Probe report.
type loadError struct {
	stage  loadStage // which step failed
	name   string    // the framework path, symbol, class or selector
	owner  string    // the library of a symbol, or the class of a selector
	detail string    // dlerror text, when there is one
}

// Error says which step failed and why, in words a user can act on.
func (e *loadError) Error() string {
	switch e.stage {
	case stageFramework:
		return fmt.Sprintf("framework %s did not load: %s", e.name, orNone(e.detail))
	case stageSymbol:
		return fmt.Sprintf("symbol %s not found in %s: %s", e.name, e.owner, orNone(e.detail))
	case stageClass:
		return fmt.Sprintf("class %s is missing after loading AppleNeuralEngine.framework "+
			"(this macOS version may have renamed its private API)", e.name)
	default:
		return fmt.Sprintf("class %s does not respond to %s "+
			"(this macOS version may have changed its private API)", e.owner, e.name)
	}
}

// orNone returns s, or "(no dlerror text)" when s is empty.
func orNone(s string) string {
	if s == "" {
		return "(no dlerror text)"
	}
	return s
}

// minMacOS is the oldest macOS whose compiler takes the reference dialect, program(1.3) with
// func main<ios18>: maderix/ANE README.md, "Requires macOS 15+". An older one fails the first compile
// with an opaque MIL error.
const minMacOS = 15

// macOSReason says why macOS version (kern.osproductversion, "15.1") is too old for the backend, or
// returns nil.
func macOSReason(version string) error {
	major, _, _ := strings.Cut(strings.TrimSpace(version), ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return fmt.Errorf("cannot read the macOS version from %q", version)
	}
	if n < minMacOS {
		return fmt.Errorf("macOS %s is older than %d: its compiler does not take program(1.3) with ios18 kernels (update macOS, or use --backend emulator)", version, minMacOS)
	}
	return nil
}
