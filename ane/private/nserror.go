package private

import "fmt"

// FrameworkError is a failure reported by AppleNeuralEngine.framework: a method that returned NO or nil,
// with the NSError it filled in, if any. Callers can find it with errors.As.
type FrameworkError struct {
	Op          string // the Objective-C method that failed, e.g. "compileWithQoS:options:error:"
	Domain      string // the NSError domain; empty when the framework gave no NSError
	Code        int64  // the NSError code
	Description string // the NSError's description, which includes its userInfo
}

// Error names the method and gives the NSError's description, domain and code.
func (e *FrameworkError) Error() string {
	switch {
	case e.Domain == "" && e.Description == "":
		return e.Op + " failed without an NSError"
	case e.Domain == "":
		return e.Op + " failed: " + e.Description
	}
	return fmt.Sprintf("%s failed: %s (domain %s, code %d)", e.Op, e.Description, e.Domain, e.Code)
}
