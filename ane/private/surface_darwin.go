//go:build darwin && arm64

package private

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// ioSurface is an IOSurface of exactly n bytes, mapped into the process.
type ioSurface struct {
	fw   *frameworks
	ref  uintptr // IOSurfaceRef, owned (+1 from IOSurfaceCreate)
	base uintptr // the base address seen at creation
	buf  []byte  // the n bytes at base
}

// newSurface creates an IOSurface laid out as the reference does for ANE I/O: one row of n one-byte
// elements (surfaceProps).
func (d *aneDriver) newSurface(n int) (surface, error) {
	fw := d.fw
	if n <= 0 {
		return nil, fmt.Errorf("IOSurfaceCreate: size %d bytes", n)
	}
	var ref uintptr
	fw.withPool(func() error {
		props := fw.newDict()
		for _, p := range surfaceProps(n) {
			props.Send(selSetObjectForKey, fw.nsNumberOf(p.value), fw.surfaceKeys[p.key])
		}
		ref, _, _ = purego.SyscallN(fw.sfCreate, uintptr(props))
		return nil
	})
	if ref == 0 {
		return nil, fmt.Errorf("IOSurfaceCreate returned NULL for %d bytes", n)
	}
	if alloc, _, _ := purego.SyscallN(fw.sfAlloc, ref); alloc < uintptr(n) {
		purego.SyscallN(fw.cfRelease, ref)
		return nil, fmt.Errorf("IOSurfaceCreate: allocated %d bytes, asked for %d", alloc, n)
	}
	p := fw.baseAddress(ref)
	if p == nil {
		purego.SyscallN(fw.cfRelease, ref)
		return nil, fmt.Errorf("IOSurfaceGetBaseAddress returned NULL")
	}
	return &ioSurface{fw: fw, ref: ref, base: uintptr(p), buf: unsafe.Slice((*byte)(p), n)}, nil
}

// lock runs IOSurfaceLock and checks that the surface's memory has not moved since creation, which
// Bytes relies on.
func (s *ioSurface) lock(readOnly bool) error {
	if kr, _, _ := purego.SyscallN(s.fw.sfLock, s.ref, uintptr(lockOptions(readOnly)), 0); int32(kr) != 0 {
		return fmt.Errorf("IOSurfaceLock: kern_return_t %#x", uint32(kr))
	}
	if b, _, _ := purego.SyscallN(s.fw.sfBase, s.ref); b != s.base {
		purego.SyscallN(s.fw.sfUnlock, s.ref, uintptr(lockOptions(readOnly)), 0)
		return fmt.Errorf("IOSurface base address moved from %#x to %#x", s.base, b)
	}
	return nil
}

// unlock runs IOSurfaceUnlock.
func (s *ioSurface) unlock(readOnly bool) error {
	if kr, _, _ := purego.SyscallN(s.fw.sfUnlock, s.ref, uintptr(lockOptions(readOnly)), 0); int32(kr) != 0 {
		return fmt.Errorf("IOSurfaceUnlock: kern_return_t %#x", uint32(kr))
	}
	return nil
}

// bytes is the surface's memory.
func (s *ioSurface) bytes() []byte { return s.buf }

// free releases the IOSurface. surfaceMemory calls it once, when no access is in progress, and fails
// every later Lock, so buf is never used again.
func (s *ioSurface) free() {
	purego.SyscallN(s.fw.cfRelease, s.ref)
}

// wrap returns an autoreleased _ANEIOSurfaceObject for the surface.
func (s *ioSurface) wrap() objc.ID {
	return objc.ID(s.fw.ioObject).Send(selObjectWithIOSurfaceObject, s.ref)
}
