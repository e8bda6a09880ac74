//go:build darwin && arm64

package private

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// aneDriver sends the reference's Objective-C messages to AppleNeuralEngine.framework.
type aneDriver struct {
	fw *frameworks
}

var _ driver = (*aneDriver)(nil)

// tempDir is NSTemporaryDirectory(), read once at load: the framework stages models there, so the
// backend must use the same directory rather than os.TempDir (which follows $TMPDIR and may differ).
func (d *aneDriver) tempDir() string { return d.fw.tmp }

// newModel builds the descriptor from the MIL text and a weights dictionary
// {"@model_path/...": {offset: 0, data: NSData}} and the in-memory model from it.
func (d *aneDriver) newModel(milText []byte, files []weightFile) (model, error) {
	fw := d.fw
	m := &aneModel{fw: fw}
	err := fw.withPool(func() error {
		weights := fw.newDict()
		for _, f := range files {
			entry := fw.newDict()
			entry.Send(selSetObjectForKey, fw.nsNumberOf(0), fw.nsString(weightKeyOffset))
			entry.Send(selSetObjectForKey, fw.nsDataOf(f.data), fw.nsString(weightKeyData))
			weights.Send(selSetObjectForKey, entry, fw.nsString(f.key))
		}
		desc := objc.ID(fw.descriptor).Send(selModelWithMILTextWeights, fw.nsDataOf(milText), weights, objc.ID(0))
		if desc == 0 {
			return &FrameworkError{Op: selModelWithMILText,
				Description: "returned nil (the framework rejected the MIL text or the weights dictionary)"}
		}
		id := objc.ID(fw.model).Send(selInMemoryModelWithDesc, desc)
		if id == 0 {
			return &FrameworkError{Op: selInMemoryModel, Description: "returned nil"}
		}
		m.hex = goString(id.Send(selHexStringIdentifier))
		m.id = id.Send(selRetain)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// aneModel is a retained _ANEInMemoryModel.
type aneModel struct {
	fw  *frameworks
	id  objc.ID // the model, retained
	hex string  // its hexStringIdentifier
}

func (m *aneModel) hexID() string { return m.hex }

func (m *aneModel) compile() error {
	return m.fw.callBool(selCompileWithQoS, func(e *objc.ID) bool {
		return objc.Send[bool](m.id, selCompile, uint32(qos), m.fw.emptyDict, e)
	})
}

func (m *aneModel) load() error {
	return m.fw.callBool(selLoadWithQoS, func(e *objc.ID) bool {
		return objc.Send[bool](m.id, selLoad, uint32(qos), m.fw.emptyDict, e)
	})
}

func (m *aneModel) unload() error {
	return m.fw.callBool(selUnloadWithQoS, func(e *objc.ID) bool {
		return objc.Send[bool](m.id, selUnload, uint32(qos), e)
	})
}

// release drops the model inside an autorelease pool, as maderix/ANE bridge/ane_bridge.m releases in
// @autoreleasepool: whatever the framework autoreleases while tearing the model down is freed at once.
func (m *aneModel) release() {
	m.fw.withPool(func() error { m.id.Send(selRelease); return nil })
}

// newRequest wraps every surface in an _ANEIOSurfaceObject and builds the _ANERequest with inputs at
// indices 0..len(inputs)-1 and outputs at 0..len(outputs)-1, no weights buffer, no perf stats and
// procedure 0.
func (m *aneModel) newRequest(inputs, outputs []surface) (request, error) {
	fw := m.fw
	r := &aneRequest{fw: fw, model: m.id, errOut: new(objc.ID)}
	err := fw.withPool(func() error {
		ins, inIdx, err := fw.surfaceArrays(inputs)
		if err != nil {
			return err
		}
		outs, outIdx, err := fw.surfaceArrays(outputs)
		if err != nil {
			return err
		}
		req := objc.ID(fw.request).Send(selRequestWithInputs, ins, inIdx, outs, outIdx,
			objc.ID(0), objc.ID(0), fw.nsNumberOf(0))
		if req == 0 {
			return &FrameworkError{Op: selRequestWith, Description: "returned nil"}
		}
		r.req = req.Send(selRetain)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// surfaceArrays returns an NSArray of _ANEIOSurfaceObjects for ss and the NSArray of their indices.
func (fw *frameworks) surfaceArrays(ss []surface) (objs, idx objc.ID, err error) {
	objs, idx = fw.newArray(), fw.newArray()
	for i, s := range ss {
		ios, ok := s.(*ioSurface)
		if !ok {
			return 0, 0, fmt.Errorf("surface %d is not an IOSurface", i)
		}
		w := ios.wrap()
		if w == 0 {
			return 0, 0, &FrameworkError{Op: selObjectWithSurf, Description: "returned nil"}
		}
		objs.Send(selAddObject, w)
		idx.Send(selAddObject, fw.nsNumberOf(int64(i)))
	}
	return objs, idx, nil
}

// aneRequest is a retained _ANERequest with the model it runs.
type aneRequest struct {
	fw     *frameworks
	model  objc.ID  // the model, kept alive by the Kernel
	req    objc.ID  // the request, retained
	errOut *objc.ID // heap slot for the NSError ** argument, reused by every eval
}

// eval sends evaluateWithQoS:options:request:error: through purego.SyscallN with values resolved at
// compile time: no selector lookup, no reflection.
func (r *aneRequest) eval() error {
	fw := r.fw
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool, _, _ := purego.SyscallN(fw.poolPush)
	*r.errOut = 0
	ok, _, _ := purego.SyscallN(fw.msgSend, uintptr(r.model), uintptr(selEvaluate), qos,
		uintptr(fw.emptyDict), uintptr(r.req), uintptr(unsafe.Pointer(r.errOut)))
	var err error
	if ok&0xff == 0 {
		err = frameworkError(selEvaluateWithQoS, *r.errOut)
	}
	purego.SyscallN(fw.poolPop, pool)
	return err
}

// release drops the request inside an autorelease pool (see aneModel.release).
func (r *aneRequest) release() {
	r.fw.withPool(func() error { r.req.Send(selRelease); return nil })
}
