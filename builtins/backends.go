package builtins

// The standard backends register themselves with the ane registry when ane/backends is imported; the
// host imports it, so a program that embeds the host can open "auto", "ane" and "emulator" by name
// without an import of its own.
import _ "github.com/anestar/anestar/ane/backends"
