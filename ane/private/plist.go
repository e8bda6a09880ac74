package private

// qos is the quality-of-service class passed to every AppleNeuralEngine.framework call, as in the
// reference sources: 21 is 0x15, QOS_CLASS_DEFAULT (sys/qos.h; USER_INITIATED would be 0x19). maderix/ANE
// training/m5result.md measured every value from 0 to 63 with no difference in latency.
const qos = 21

// IOSurfaceLock options (IOSurfaceTypes.h).
const (
	lockReadOnly = 1 // kIOSurfaceLockReadOnly: the CPU will not write, so no cache writeback on unlock
)

// lockOptions returns the IOSurfaceLock/IOSurfaceUnlock options for an access.
func lockOptions(readOnly bool) uint32 {
	if readOnly {
		return lockReadOnly
	}
	return 0
}

// surfaceProp is one entry of the IOSurfaceCreate properties dictionary. The key is the name of the
// CFStringRef constant that IOSurface.framework exports (looked up with dlsym rather than spelled out,
// so that the framework's own key strings are used).
type surfaceProp struct {
	key   string // symbol name of the key constant, e.g. "kIOSurfaceWidth"
	value int64  // the number stored under it
}

// surfaceProps describes a surface of n bytes the way the ANE wants its I/O: a single row of n one-byte
// elements, exactly n bytes, with no pixel format.
func surfaceProps(n int) []surfaceProp {
	return []surfaceProp{
		{"kIOSurfaceWidth", int64(n)},
		{"kIOSurfaceHeight", 1},
		{"kIOSurfaceBytesPerElement", 1},
		{"kIOSurfaceBytesPerRow", int64(n)},
		{"kIOSurfaceAllocSize", int64(n)},
		{"kIOSurfacePixelFormat", 0},
	}
}

// Keys of the per-file dictionary in the weights argument of
// modelWithMILText:weights:optionsPlist:, which maps each "@model_path/..." path to
// {offset: 0, data: <the whole blob file>}. The MIL's BLOBFILE offsets index into data.
const (
	weightKeyOffset = "offset"
	weightKeyData   = "data"
)
