//go:build !(darwin && arm64)

package private

import "runtime"

// loadDriver reports that the frameworks exist only on darwin/arm64.
func loadDriver() (driver, error) {
	return nil, platformReason(runtime.GOOS, runtime.GOARCH)
}
