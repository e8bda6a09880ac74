// Package backends registers every ane backend with the ane registry: importing it for its side effect
// makes ane.Open and ane.List know the Apple Neural Engine backend (ane/private, available on
// darwin/arm64 with the framework) and the CPU emulator (ane/emulator, available everywhere).
//
//	import _ "github.com/anestar/anestar/ane/backends"
package backends

import (
	_ "github.com/anestar/anestar/ane/emulator" // registers "emulator"
	_ "github.com/anestar/anestar/ane/private"  // registers "ane"
)
