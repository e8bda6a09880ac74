// Package backends registers every ane backend with the ane registry: importing it for its side effect
// makes ane.Open and ane.List know the Apple Neural Engine backend (ane/private, available on
// darwin/arm64 with the framework) and the CPU emulator (ane/emulator, available everywhere). It is the
// one place that does: package builtins imports it, so a program that embeds the Starlark host (and the
// anestar command) has both without an import of its own; other programs import it directly.
//
//	import _ "github.com/anestar/anestar/ane/backends"
package backends

import (
	_ "github.com/anestar/anestar/ane/emulator" // registers "emulator"
	_ "github.com/anestar/anestar/ane/private"  // registers "ane"
)
