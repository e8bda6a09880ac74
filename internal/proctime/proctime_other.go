//go:build !unix

package proctime

import "time"

// cpu is not known here.
func cpu() (time.Duration, bool) { return 0, false }
