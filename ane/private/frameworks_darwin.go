//go:build darwin && arm64

package private

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// frameworks holds everything resolved once from the Apple libraries: C function addresses, the
// IOSurface property keys, classes and the shared empty options dictionary. It is never freed.
type frameworks struct {
	// C functions, called with purego.SyscallN (no reflection).
	msgSend   uintptr // objc_msgSend
	poolPush  uintptr // objc_autoreleasePoolPush
	poolPop   uintptr // objc_autoreleasePoolPop
	cfRelease uintptr // CFRelease
	tmpDirFn  uintptr // NSTemporaryDirectory
	sfCreate  uintptr // IOSurfaceCreate
	sfLock    uintptr // IOSurfaceLock
	sfUnlock  uintptr // IOSurfaceUnlock
	sfBase    uintptr // IOSurfaceGetBaseAddress
	sfAlloc   uintptr // IOSurfaceGetAllocSize

	// baseAddress is IOSurfaceGetBaseAddress typed to return a pointer; used once per surface.
	baseAddress func(ref uintptr) unsafe.Pointer

	surfaceKeys map[string]objc.ID // IOSurface property key name → its CFStringRef

	// Classes.
	descriptor, model, request, ioObject objc.Class // AppleNeuralEngine's private classes
	clsString, clsData, clsNumber        objc.Class // NSString, NSData, NSNumber
	clsDictionary, clsMutableDict        objc.Class // NSDictionary, NSMutableDictionary
	clsMutableArray, clsArray            objc.Class // NSMutableArray, NSArray

	emptyDict objc.ID // a retained empty NSDictionary, the options of every call
	tmp       string  // NSTemporaryDirectory()
}

// Selectors, registered once with the Objective-C runtime.
var (
	selAlloc                     = objc.RegisterName("alloc")
	selInit                      = objc.RegisterName("init")
	selRetain                    = objc.RegisterName("retain")
	selRelease                   = objc.RegisterName("release")
	selRespondsToSelector        = objc.RegisterName("respondsToSelector:")
	selInstancesRespond          = objc.RegisterName("instancesRespondToSelector:")
	selStringWithUTF8String      = objc.RegisterName("stringWithUTF8String:")
	selUTF8String                = objc.RegisterName("UTF8String")
	selDataWithBytesLength       = objc.RegisterName("dataWithBytes:length:")
	selNumberWithLongLong        = objc.RegisterName("numberWithLongLong:")
	selDictionary                = objc.RegisterName("dictionary")
	selSetObjectForKey           = objc.RegisterName("setObject:forKey:")
	selArray                     = objc.RegisterName("array")
	selAddObject                 = objc.RegisterName("addObject:")
	selDomain                    = objc.RegisterName("domain")
	selCode                      = objc.RegisterName("code")
	selDescription               = objc.RegisterName("description")
	selModelWithMILTextWeights   = objc.RegisterName(selModelWithMILText)
	selInMemoryModelWithDesc     = objc.RegisterName(selInMemoryModel)
	selHexStringIdentifier       = objc.RegisterName(selHexIdentifier)
	selCompile                   = objc.RegisterName(selCompileWithQoS)
	selLoad                      = objc.RegisterName(selLoadWithQoS)
	selEvaluate                  = objc.RegisterName(selEvaluateWithQoS)
	selUnload                    = objc.RegisterName(selUnloadWithQoS)
	selRequestWithInputs         = objc.RegisterName(selRequestWith)
	selObjectWithIOSurfaceObject = objc.RegisterName(selObjectWithSurf)
	selModelAttributes           = objc.RegisterName(selModelAttrs)
	selObjectForKey              = objc.RegisterName("objectForKey:")
	selCount                     = objc.RegisterName("count")
	selObjectAtIndex             = objc.RegisterName("objectAtIndex:")
	selLongLongValue             = objc.RegisterName("longLongValue")
	selIsKindOfClass             = objc.RegisterName("isKindOfClass:")
)

var (
	loadOnce   sync.Once
	loadedFW   *frameworks
	loadFWErr  error
	loadedDrv  driver
	libHandles = map[string]uintptr{}
)

// loadDriver loads the frameworks once per process and returns the driver over them, or why they
// cannot be used.
func loadDriver() (driver, error) {
	loadOnce.Do(func() {
		loadedFW, loadFWErr = loadFrameworks()
		if loadFWErr == nil {
			loadedDrv = &aneDriver{fw: loadedFW}
		}
	})
	return loadedDrv, loadFWErr
}

// loadFrameworks opens the libraries, resolves functions, keys and classes, and checks that every
// private method exists.
func loadFrameworks() (*frameworks, error) {
	version, err := syscall.Sysctl("kern.osproductversion")
	if err != nil {
		return nil, fmt.Errorf("cannot read the macOS version (sysctl kern.osproductversion): %w", err)
	}
	if err := macOSReason(version); err != nil {
		return nil, err
	}
	for _, path := range []string{objcPath, coreFoundationPath, foundationPath, ioSurfacePath, aneFrameworkPath} {
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			return nil, &loadError{stage: stageFramework, name: path, detail: err.Error()}
		}
		libHandles[path] = h
	}
	fw := &frameworks{surfaceKeys: map[string]objc.ID{}}
	funcs := []struct {
		lib, name string
		dst       *uintptr
	}{
		{objcPath, "objc_msgSend", &fw.msgSend},
		{objcPath, "objc_autoreleasePoolPush", &fw.poolPush},
		{objcPath, "objc_autoreleasePoolPop", &fw.poolPop},
		{coreFoundationPath, "CFRelease", &fw.cfRelease},
		{foundationPath, "NSTemporaryDirectory", &fw.tmpDirFn},
		{ioSurfacePath, "IOSurfaceCreate", &fw.sfCreate},
		{ioSurfacePath, "IOSurfaceLock", &fw.sfLock},
		{ioSurfacePath, "IOSurfaceUnlock", &fw.sfUnlock},
		{ioSurfacePath, "IOSurfaceGetBaseAddress", &fw.sfBase},
		{ioSurfacePath, "IOSurfaceGetAllocSize", &fw.sfAlloc},
	}
	for _, f := range funcs {
		addr, err := symbol(f.lib, f.name)
		if err != nil {
			return nil, err
		}
		*f.dst = addr
	}
	purego.RegisterFunc(&fw.baseAddress, fw.sfBase)
	for _, p := range surfaceProps(1) {
		addr, err := symbol(ioSurfacePath, p.key)
		if err != nil {
			return nil, err
		}
		// The symbol is a CFStringRef variable; the key is its value.
		key := readWord(addr)
		if key == 0 {
			return nil, &loadError{stage: stageSymbol, name: p.key, owner: ioSurfacePath, detail: "the constant is NULL"}
		}
		fw.surfaceKeys[p.key] = objc.ID(key)
	}

	classes := []struct {
		name string
		dst  *objc.Class
	}{
		{classDescriptor, &fw.descriptor},
		{classModel, &fw.model},
		{classRequest, &fw.request},
		{classIOSurface, &fw.ioObject},
		{"NSString", &fw.clsString},
		{"NSData", &fw.clsData},
		{"NSNumber", &fw.clsNumber},
		{"NSDictionary", &fw.clsDictionary},
		{"NSMutableDictionary", &fw.clsMutableDict},
		{"NSMutableArray", &fw.clsMutableArray},
		{"NSArray", &fw.clsArray},
	}
	byName := map[string]objc.Class{}
	for _, c := range classes {
		*c.dst = objc.GetClass(c.name)
		if *c.dst == 0 {
			return nil, &loadError{stage: stageClass, name: c.name}
		}
		byName[c.name] = *c.dst
	}
	for _, m := range privateAPI {
		cls := objc.ID(byName[m.class])
		sel := objc.RegisterName(m.sel)
		var ok bool
		if m.classMethod {
			ok = objc.Send[bool](cls, selRespondsToSelector, sel)
		} else {
			ok = objc.Send[bool](cls, selInstancesRespond, sel)
		}
		if !ok {
			return nil, &loadError{stage: stageMethod, name: methodName(m), owner: m.class}
		}
	}

	fw.emptyDict = objc.ID(fw.clsDictionary).Send(selAlloc).Send(selInit)
	fw.withPool(func() error {
		tmp, _, _ := purego.SyscallN(fw.tmpDirFn)
		fw.tmp = goString(objc.ID(tmp))
		return nil
	})
	if fw.tmp == "" {
		return nil, errors.New("NSTemporaryDirectory() returned an empty path")
	}
	return fw, nil
}

// methodName spells m's selector with the sign Objective-C uses: + for a class method, - for an
// instance method.
func methodName(m apiMethod) string {
	if m.classMethod {
		return "+" + m.sel
	}
	return "-" + m.sel
}

// symbol returns the address of name in the library opened from lib.
func symbol(lib, name string) (uintptr, error) {
	addr, err := purego.Dlsym(libHandles[lib], name)
	if err != nil {
		return 0, &loadError{stage: stageSymbol, name: name, owner: lib, detail: err.Error()}
	}
	return addr, nil
}

// readWord returns the pointer-sized value stored at addr, a C address from dlsym.
func readWord(addr uintptr) uintptr {
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return *(*uintptr)(p)
}

// withPool runs f inside an autorelease pool on one locked OS thread, so that the objects the
// framework autoreleases during f are freed when it returns.
func (fw *frameworks) withPool(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pool, _, _ := purego.SyscallN(fw.poolPush)
	defer purego.SyscallN(fw.poolPop, pool)
	return f()
}
