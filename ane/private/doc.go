// Package private is the Apple Neural Engine backend: it compiles MIL programs with the private
// AppleNeuralEngine.framework and runs them on the ANE, moving tensors through IOSurfaces. It is pure Go
// (no cgo): the frameworks are opened at run time with purego and spoken to with purego/objc.
//
// # Trying it on a Mac
//
// On a Mac with Apple silicon, from the repository root, run
//
//	go test ./ane/private/ -v
//
// and send back the whole output, together with the output of `sw_vers` and `uname -m` and the chip
// name (Apple menu > About This Mac). TestProbe prints whether the frameworks loaded and, if not, why;
// TestSmoke compiles and runs two tiny programs and prints the compile count; TestConformance runs the
// backend conformance suite (ane/anetest) that the emulator passes. Tests skip, saying why, when
// the backend is unavailable.
//
// # How it works
//
// The call sequence is that of the reference training program:
//
//  1. Load libobjc, CoreFoundation, Foundation, IOSurface and AppleNeuralEngine.framework with dlopen;
//     resolve the C functions, the IOSurface property keys, the classes (_ANEInMemoryModelDescriptor,
//     _ANEInMemoryModel, _ANERequest, _ANEIOSurfaceObject) and the selectors once, and check that every
//     private method exists. Probe reports the first thing that failed.
//  2. Compile: type-check the program and refuse it when it breaks a rule the hardware is known to have
//     (ane.Eligible), before anything reaches the framework; print it with mil.Print, with the reference
//     buildInfo when it has none (mil.WithBuildInfo); build the descriptor with
//     modelWithMILText:weights:optionsPlist: from the text (NSData) and a weights dictionary mapping each
//     "@model_path/..." path to {offset: 0, data: <blob file>}; make the model with
//     inMemoryModelWithDescriptor:; write model.mil and the weight files under
//     NSTemporaryDirectory()/<hexStringIdentifier>/; then compileWithQoS:options:error: and
//     loadWithQoS:options:error: at QoS 21 (QOS_CLASS_DEFAULT), the load retried once after 100 ms. Each
//     compile attempt is counted (Backend.Compiles), since a process can compile only about 100-119
//     models before compiles fail.
//  3. Read the loaded model's ports (modelAttributes → NetworkStatusList[0] → LiveInputList and
//     LiveOutputList) and bind each to the input or output of its name, checking dims and dtype
//     (ports.go, ports_darwin.go): the framework reorders ports. Create one IOSurface per input and output
//     of main, sized exactly for its declared type, wrap each in an ane.Surface, and build the _ANERequest
//     over their _ANEIOSurfaceObjects in the ports' order.
//  4. Kernel.Eval sends evaluateWithQoS:options:request:error: with everything prepared at compile time.
//  5. Kernel.Close unloads the model, releases it and the request inside an autorelease pool, frees the
//     surfaces, and removes the staging directory.
//
// The backend has no options: the emulator's settings (--fp32, --check-numerics, --relaxed) are refused
// with a message by its registry entry. Probe also refuses a macOS older than 15.
//
// NSTemporaryDirectory() is taken from Foundation rather than os.TempDir because the framework stages
// models in that directory itself; os.TempDir follows $TMPDIR, which a user may have pointed elsewhere.
//
// # Files
//
// Only the files ending in _darwin.go call into Apple frameworks, through the driver interface
// (driver.go); they build for darwin/arm64 only. Everything else is plain Go that builds and is tested
// on every platform: the kernel life cycle and compile sequence (compile.go, kernel.go, tested against a
// recording fake driver, and by the whole conformance suite with the emulator standing in for the
// framework), the binding of ports by name (ports.go, tested against a fake that reorders them), the
// input/output types (iospec.go), the weight file paths (weights.go), the staging
// directory (modeldir.go), surface access counting (memory.go), the IOSurface properties (plist.go),
// NSError formatting (nserror.go), the compile counter (counter.go) and the unavailability reasons
// (reason.go).
//
// The backend registers itself as "ane" (priority 10) on every platform; elsewhere Probe says
// "not darwin/arm64 (this is GOOS/GOARCH)", so `anestar backends` can show why it is not used.
package private
