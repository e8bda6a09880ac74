//go:build darwin && arm64

package private

import (
	"unsafe"

	"github.com/ebitengine/purego/objc"
)

// The helpers below return autoreleased objects; call them inside frameworks.withPool.

// nsString returns an NSString holding s, which must not contain NUL bytes.
func (fw *frameworks) nsString(s string) objc.ID {
	return objc.ID(fw.clsString).Send(selStringWithUTF8String, s)
}

// nsDataOf returns an NSData holding a copy of b.
func (fw *frameworks) nsDataOf(b []byte) objc.ID {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	return objc.ID(fw.clsData).Send(selDataWithBytesLength, p, uint64(len(b)))
}

// nsNumberOf returns an NSNumber holding v.
func (fw *frameworks) nsNumberOf(v int64) objc.ID {
	return objc.ID(fw.clsNumber).Send(selNumberWithLongLong, v)
}

// newDict returns an empty NSMutableDictionary.
func (fw *frameworks) newDict() objc.ID { return objc.ID(fw.clsMutableDict).Send(selDictionary) }

// newArray returns an empty NSMutableArray.
func (fw *frameworks) newArray() objc.ID { return objc.ID(fw.clsMutableArray).Send(selArray) }

// goString copies an NSString into a Go string; nil gives "".
func goString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	return objc.Send[string](s, selUTF8String)
}

// frameworkError describes the failure of op with the NSError e, which may be nil. It must run inside
// the autorelease pool that holds e.
func frameworkError(op string, e objc.ID) error {
	if e == 0 {
		return &FrameworkError{Op: op}
	}
	return &FrameworkError{
		Op:          op,
		Domain:      goString(e.Send(selDomain)),
		Code:        objc.Send[int64](e, selCode),
		Description: goString(e.Send(selDescription)),
	}
}

// callBool sends a method that returns BOOL and reports failure through an NSError ** argument, which
// call passes on; it runs inside an autorelease pool and turns NO into a FrameworkError.
func (fw *frameworks) callBool(op string, call func(errOut *objc.ID) bool) error {
	return fw.withPool(func() error {
		var e objc.ID
		if call(&e) {
			return nil
		}
		return frameworkError(op, e)
	})
}
