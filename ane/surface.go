package ane

import (
	"fmt"

	"github.com/anestar/anestar/mil"
)

// Memory is the storage behind a Surface: a plain allocation on the emulator, an IOSurface on the ANE.
// Bytes is valid only between Lock and Unlock.
type Memory interface {
	// Lock makes Bytes valid; readOnly promises no writes until Unlock.
	Lock(readOnly bool) error
	// Unlock ends an access begun by Lock with the same readOnly value.
	Unlock(readOnly bool) error
	// Bytes is the whole buffer.
	Bytes() []byte
}

// Surface is an exact-size buffer holding one program input or output tensor, packed channel-first.
//
// For the ANE's [1,C,1,S] tensors, channel c's S values are contiguous. For a tensor of another shape
// [d0, d1, ...], the channel axis is d1 when d0 == 1 and rank >= 2, else d0, and a "channel" is the
// contiguous run of the remaining elements.
//
// A surface may also be a view of one part of a packed surface (NewView): a window of its channels and
// columns, which every method reads and writes alone.
type Surface struct {
	name     string   // the MIL name of the input or output
	typ      mil.Type // its tensor type; DType is FP16 or FP32
	channels int      // size of the channel axis
	spatial  int      // elements per channel
	mem      Memory   // storage, exactly typ.NumElements()*elemSize bytes (a view's: its parent's)
	pitch    int      // elements from one channel's start to the next's: spatial, or the parent's for a view
	base     int      // element offset of channel 0, column 0 in mem: 0 but for a view
	parent   *Surface // the packed surface a view is part of; nil for a whole surface
	flat     int      // a flattened view's block width (surface_flat.go); 0 otherwise
}

// NewSurface wraps mem as the surface of tensor type t. mem must hold exactly the tensor's bytes.
func NewSurface(name string, t mil.Type, mem Memory) (*Surface, error) {
	if t.Kind != mil.TensorKind && t.Kind != mil.ScalarKind {
		return nil, fmt.Errorf("surface %q: type %s is not a tensor", name, t)
	}
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		return nil, fmt.Errorf("surface %q: dtype %s: surfaces hold fp16 or fp32", name, t.DType)
	}
	s := &Surface{name: name, typ: t, mem: mem}
	s.channels, s.spatial = channelSplit(t.Shape)
	s.pitch = s.spatial
	if err := mem.Lock(true); err != nil {
		return nil, fmt.Errorf("surface %q: %w", name, err)
	}
	n := len(mem.Bytes())
	if err := mem.Unlock(true); err != nil {
		return nil, fmt.Errorf("surface %q: %w", name, err)
	}
	if n != s.Bytes() {
		return nil, fmt.Errorf("surface %q: memory holds %d bytes, %s needs %d", name, n, t, s.Bytes())
	}
	return s, nil
}

// channelSplit returns the channel count and elements per channel of a tensor shape.
func channelSplit(shape []int) (channels, spatial int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	switch {
	case len(shape) == 0:
		return 1, 1
	case len(shape) >= 2 && shape[0] == 1:
		channels = shape[1]
	default:
		channels = shape[0]
	}
	if channels == 0 {
		return 0, 0
	}
	return channels, n / channels
}

// Name is the MIL name of the input or output this surface holds.
func (s *Surface) Name() string { return s.name }

// Type is the surface's tensor type.
func (s *Surface) Type() mil.Type { return s.typ }

// Channels is the size of the channel axis.
func (s *Surface) Channels() int { return s.channels }

// Spatial is the number of elements per channel.
func (s *Surface) Spatial() int { return s.spatial }

// ElemSize is the bytes per element: 2 for fp16, 4 for fp32.
func (s *Surface) ElemSize() int { return s.typ.DType.Bits() / 8 }

// Bytes is the exact size of the surface in bytes (for a view, of its part).
func (s *Surface) Bytes() int { return s.channels * s.spatial * s.ElemSize() }

// memBytes is the size of the memory behind the surface: its own, or its parent's for a view.
func (s *Surface) memBytes() int {
	if s.parent != nil {
		return s.parent.Bytes()
	}
	return s.Bytes()
}

// off is the element offset in memory of channel ch, column col.
func (s *Surface) off(ch, col int) int { return s.base + ch*s.pitch + col }

// contiguous reports whether the surface's channels follow each other in memory without a gap.
func (s *Surface) contiguous() bool { return s.pitch == s.spatial && s.flat == 0 }

// NewView returns the part of the packed [1, C, 1, W] surface parent that holds a [1, channels, 1,
// spatial] tensor called name in channels [channel, channel + channels) and columns [column, column +
// spatial): a surface whose reads and writes touch that window alone. Its dtype is the parent's.
func NewView(parent *Surface, name string, shape []int, channel, column int) (*Surface, error) {
	if parent.parent != nil {
		return nil, fmt.Errorf("surface %q: a view of a view", name)
	}
	t := mil.Tensor(parent.typ.DType, shape...)
	v := &Surface{name: name, typ: t, mem: parent.mem, pitch: parent.pitch, parent: parent}
	v.channels, v.spatial = channelSplit(shape)
	if channel < 0 || column < 0 || channel+v.channels > parent.channels || column+v.spatial > parent.spatial {
		return nil, fmt.Errorf("surface %q: part [%d, %d) x [%d, %d) does not fit in %q (%d x %d)", name,
			channel, channel+v.channels, column, column+v.spatial, parent.name, parent.channels, parent.spatial)
	}
	v.base = parent.off(channel, column)
	return v, nil
}

// Parent is the packed surface a view is part of, or nil for a whole surface.
func (s *Surface) Parent() *Surface { return s.parent }

// Memory is the storage behind the surface.
func (s *Surface) Memory() Memory { return s.mem }
