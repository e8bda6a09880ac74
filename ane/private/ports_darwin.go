//go:build darwin && arm64

package private

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego/objc"
)

// The keys of the loaded model's attributes that hold its ports (see ports.go).
const (
	keyNetworkStatusList = "NetworkStatusList"
	keyLiveInputList     = "LiveInputList"
	keyLiveOutputList    = "LiveOutputList"
)

// maxPorts bounds the ports read from a model, against a malformed attributes dictionary.
const maxPorts = 1 << 12

// ports reads modelAttributes → NetworkStatusList[0] → LiveInputList / LiveOutputList, checking the
// class of every value before it sends it a message (a later framework could store something else
// under a key; an unrecognised selector would raise an Objective-C exception).
func (m *aneModel) ports() (inputs, outputs []port, err error) {
	fw := m.fw
	err = fw.withPool(func() error {
		attrs := m.id.Send(selModelAttributes)
		if !fw.isKind(attrs, fw.clsDictionary) {
			return errors.New("modelAttributes is not a dictionary")
		}
		nsl := attrs.Send(selObjectForKey, fw.nsString(keyNetworkStatusList))
		if !fw.isKind(nsl, fw.clsArray) || objc.Send[uint64](nsl, selCount) == 0 {
			return errors.New(keyNetworkStatusList + " is missing, empty or not an array")
		}
		proc := nsl.Send(selObjectAtIndex, uint64(0))
		if !fw.isKind(proc, fw.clsDictionary) {
			return errors.New(keyNetworkStatusList + "[0] is not a dictionary")
		}
		var err error
		if inputs, err = fw.livePorts(proc, keyLiveInputList); err != nil {
			return err
		}
		outputs, err = fw.livePorts(proc, keyLiveOutputList)
		return err
	})
	return inputs, outputs, err
}

// livePorts reads the port list under key of one NetworkStatusList entry.
func (fw *frameworks) livePorts(proc objc.ID, key string) ([]port, error) {
	list := proc.Send(selObjectForKey, fw.nsString(key))
	if !fw.isKind(list, fw.clsArray) {
		return nil, fmt.Errorf("%s is missing or not an array", key)
	}
	n := objc.Send[uint64](list, selCount)
	if n > maxPorts {
		return nil, fmt.Errorf("%s lists %d ports", key, n)
	}
	var out []port
	for i := range n {
		d := list.Send(selObjectAtIndex, i)
		if !fw.isKind(d, fw.clsDictionary) {
			return nil, fmt.Errorf("%s[%d] is not a dictionary", key, i)
		}
		out = append(out, parsePort(nsEntry{fw, d}))
	}
	return out, nil
}

// nsEntry is one port entry, an NSDictionary, read through the class checks.
type nsEntry struct {
	fw *frameworks
	d  objc.ID
}

func (e nsEntry) str(key string) (string, bool) {
	v := e.d.Send(selObjectForKey, e.fw.nsString(key))
	if !e.fw.isKind(v, e.fw.clsString) {
		return "", false
	}
	return goString(v), true
}

func (e nsEntry) num(key string) (int64, bool) {
	v := e.d.Send(selObjectForKey, e.fw.nsString(key))
	if !e.fw.isKind(v, e.fw.clsNumber) {
		return 0, false
	}
	return objc.Send[int64](v, selLongLongValue), true
}

// isKind reports whether o is a non-nil instance of c or of a subclass.
func (fw *frameworks) isKind(o objc.ID, c objc.Class) bool {
	return o != 0 && objc.Send[bool](o, selIsKindOfClass, c)
}
