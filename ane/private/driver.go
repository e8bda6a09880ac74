package private

// driver is the thin layer over the Apple frameworks: on darwin/arm64 it sends the Objective-C
// messages of the reference sources; the tests give a fake. Everything above it (validation, staging,
// counting, cleanup, the kernel's life cycle) is plain Go that runs anywhere.
type driver interface {
	// tempDir is NSTemporaryDirectory(), under which the framework expects staged models.
	tempDir() string
	// newModel builds the in-memory model descriptor and model from the MIL text and weight files
	// (modelWithMILText:weights:optionsPlist:, inMemoryModelWithDescriptor:). It does not compile.
	newModel(milText []byte, files []weightFile) (model, error)
	// newSurface allocates an IOSurface of exactly n bytes.
	newSurface(n int) (surface, error)
}

// model is one in-memory model.
type model interface {
	// hexID is the model's hexStringIdentifier, the name of its staging directory.
	hexID() string
	// compile runs compileWithQoS:options:error:.
	compile() error
	// load runs loadWithQoS:options:error:.
	load() error
	// ports reads the loaded model's inputs and outputs, in the model's order, from its attributes
	// (modelAttributes → NetworkStatusList[0] → LiveInputList / LiveOutputList; see ports.go).
	ports() (inputs, outputs []port, err error)
	// newRequest builds the request that evaluates the model with these input and output surfaces, in
	// the order of its ports (input i has index i, output j index j).
	newRequest(inputs, outputs []surface) (request, error)
	// unload runs unloadWithQoS:error:.
	unload() error
	// release drops the backend's reference to the model.
	release()
}

// request is a prepared evaluation: the model with its surfaces.
type request interface {
	// eval runs evaluateWithQoS:options:request:error: once.
	eval() error
	// release drops the backend's reference to the request.
	release()
}

// surface is one IOSurface.
type surface interface {
	// lock runs IOSurfaceLock with the options for a read-only or read-write access.
	lock(readOnly bool) error
	// unlock runs IOSurfaceUnlock with the same options.
	unlock(readOnly bool) error
	// bytes is the surface's memory, exactly as long as requested; valid while locked.
	bytes() []byte
	// free releases the IOSurface (CFRelease).
	free()
}
