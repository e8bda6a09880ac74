package builtins

import (
	"fmt"
	"github.com/anestar/anestar/internal/floats"
	"github.com/anestar/anestar/internal/memlimit"
	"strings"
	"sync"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Tensor is a float32 array with a shape, stored contiguously in row-major order. For the ANE's
// activations a [C, S] tensor is channel-first: channel c's S values are contiguous, as on a surface.
//
// A Tensor may be a view of part of another (a slice along the first axis, a reshape); views share the
// storage, and with it the holds that the async queue places on tensors it is working on.
type Tensor struct {
	shape  []int     // dims, outermost first; at least one
	data   []float32 // the elements, len == product of shape
	st     *storage  // shared by a tensor and all its views
	frozen bool      // set by Freeze; a frozen tensor cannot be changed
}

// storage is the allocation behind a tensor and its views, and the async queue's holds on it.
type storage struct {
	mu      sync.Mutex
	readers int    // pending queued jobs that read it
	writers int    // pending queued jobs that write it
	owner   *queue // the queue holding it, nil when no holds
}

var (
	_ starlark.HasAttrs    = (*Tensor)(nil)
	_ starlark.HasBinary   = (*Tensor)(nil)
	_ starlark.HasUnary    = (*Tensor)(nil)
	_ starlark.Indexable   = (*Tensor)(nil)
	_ starlark.HasSetIndex = (*Tensor)(nil)
	_ starlark.Iterable    = (*Tensor)(nil)
)

// NewTensor returns a zero tensor of the given shape. Every dim must be positive.
func NewTensor(shape ...int) (*Tensor, error) {
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if 4*uint64(n) >= memlimit.Small { // the name is built only where it may be needed
		if err := memlimit.Check(4*uint64(n), "tensor "+shapeString(shape)); err != nil {
			return nil, err
		}
	}
	return &Tensor{shape: append([]int(nil), shape...), data: make([]float32, n), st: new(storage)}, nil
}

// TensorOf wraps data (not copied) as a tensor of the given shape.
func TensorOf(data []float32, shape ...int) (*Tensor, error) {
	n, err := numElements(shape)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("shape %s holds %d elements, data has %d", shapeString(shape), n, len(data))
	}
	return &Tensor{shape: append([]int(nil), shape...), data: data, st: new(storage)}, nil
}

// maxElements bounds tensor sizes so that a typo in a script is an error, not an out-of-memory crash.
const maxElements = 1 << 31

func numElements(shape []int) (int, error) {
	if len(shape) == 0 {
		return 0, fmt.Errorf("a tensor needs at least one dim")
	}
	n := 1
	for _, d := range shape {
		if d <= 0 {
			return 0, fmt.Errorf("shape %s: dims must be positive", shapeString(shape))
		}
		n *= d
		if n > maxElements {
			return 0, fmt.Errorf("shape %s: more than %d elements", shapeString(shape), maxElements)
		}
	}
	return n, nil
}

// Shape returns the tensor's dims; the caller must not change them.
func (t *Tensor) Shape() []int { return t.shape }

// Data returns the elements; writes are visible to the script.
func (t *Tensor) Data() []float32 { return t.data }

// Size is the number of elements.
func (t *Tensor) Size() int { return len(t.data) }

// String returns "tensor([2, 3])" with the shape; the values are read with list().
func (t *Tensor) String() string {
	var b strings.Builder
	b.WriteString("tensor(")
	writeShape(&b, t.shape)
	b.WriteString(")")
	return b.String()
}

func writeShape(b *strings.Builder, shape []int) {
	b.WriteString("[")
	for i, d := range shape {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(b, d)
	}
	b.WriteString("]")
}

func shapeString(shape []int) string {
	var b strings.Builder
	writeShape(&b, shape)
	return b.String()
}

// Type returns "tensor".
func (t *Tensor) Type() string { return "tensor" }

// Freeze makes the tensor immutable, as Starlark does with the globals of a loaded module.
func (t *Tensor) Freeze() { t.frozen = true }

// Truth is true: a tensor always has elements.
func (t *Tensor) Truth() starlark.Bool { return true }

// Hash fails: tensors are mutable.
func (t *Tensor) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tensor") }

// Len is the size of the first axis.
func (t *Tensor) Len() int { return t.shape[0] }

// rowSize is the number of elements in one index of the first axis.
func (t *Tensor) rowSize() int { return len(t.data) / t.shape[0] }

// view returns a tensor sharing t's storage.
func (t *Tensor) view(data []float32, shape []int) *Tensor {
	return &Tensor{shape: shape, data: data, st: t.st, frozen: t.frozen}
}

// readable fails when queued work is writing the tensor.
func (t *Tensor) readable(fn string) error {
	t.st.mu.Lock()
	w := t.st.writers
	t.st.mu.Unlock()
	if w > 0 {
		return nameErrf(fn, "%s is being written by pending async work (call wait() on its queue first)", t)
	}
	return nil
}

// writable fails when the tensor is frozen or queued work reads or writes it.
func (t *Tensor) writable(fn string) error {
	if t.frozen {
		return nameErrf(fn, "cannot change frozen %s", t)
	}
	t.st.mu.Lock()
	r, w := t.st.readers, t.st.writers
	t.st.mu.Unlock()
	if r+w > 0 {
		return nameErrf(fn, "%s is held by pending async work (call wait() on its queue first)", t)
	}
	return nil
}

// Index returns element i of a 1-D tensor, or a view of row i of a tensor of higher rank.
func (t *Tensor) Index(i int) starlark.Value {
	if len(t.shape) == 1 {
		return starlark.Float(t.data[i])
	}
	rs := t.rowSize()
	return t.view(t.data[i*rs:(i+1)*rs:(i+1)*rs], append([]int(nil), t.shape[1:]...))
}

// SetIndex assigns element i of a 1-D tensor, or row i (from a tensor of the row's size, or a number).
func (t *Tensor) SetIndex(i int, v starlark.Value) error {
	if err := t.writable("tensor[i] ="); err != nil {
		return err
	}
	if i < 0 {
		i += t.shape[0]
	}
	if i < 0 || i >= t.shape[0] {
		return fmt.Errorf("tensor index %d out of range [0, %d)", i, t.shape[0])
	}
	rs := t.rowSize()
	row := t.data[i*rs : (i+1)*rs]
	if f, ok := starlark.AsFloat(v); ok {
		for j := range row {
			row[j] = float32(f)
		}
		return nil
	}
	if u, ok := v.(*Tensor); ok {
		if u.Size() != rs {
			return fmt.Errorf("tensor[%d] = %s: row holds %d elements, value has %d", i, u, rs, u.Size())
		}
		if err := u.readable("tensor[i] ="); err != nil {
			return err
		}
		copy(row, u.data)
		return nil
	}
	return fmt.Errorf("tensor[%d] = %s: want a number or a tensor", i, v.Type())
}

// Iterate yields what Index yields, in order.
func (t *Tensor) Iterate() starlark.Iterator { return &tensorIter{t: t} }

type tensorIter struct {
	t *Tensor
	i int
}

func (it *tensorIter) Next(p *starlark.Value) bool {
	if it.i >= it.t.Len() {
		return false
	}
	*p = it.t.Index(it.i)
	it.i++
	return true
}

func (it *tensorIter) Done() {}

// Unary implements -t and +t.
func (t *Tensor) Unary(op syntax.Token) (starlark.Value, error) {
	if err := t.readable("unary " + op.String()); err != nil {
		return nil, err
	}
	switch op {
	case syntax.MINUS:
		r := &Tensor{shape: append([]int(nil), t.shape...), data: make([]float32, len(t.data)), st: new(storage)}
		floats.Neg(r.data, t.data)
		return r, nil
	case syntax.PLUS:
		return t, nil
	}
	return nil, nil
}

// Binary implements + - * / between tensors of the same shape and between a tensor and a number.
func (t *Tensor) Binary(op syntax.Token, y starlark.Value, side starlark.Side) (starlark.Value, error) {
	var k floats.Op
	switch op {
	case syntax.PLUS:
		k = floats.Add
	case syntax.MINUS:
		k = floats.Sub
	case syntax.STAR:
		k = floats.Mul
	case syntax.SLASH:
		k = floats.Div
	default:
		return nil, nil // not supported: Starlark reports the operand types
	}
	name := "tensor " + op.String()
	if err := t.readable(name); err != nil {
		return nil, err
	}
	r := &Tensor{shape: append([]int(nil), t.shape...), data: make([]float32, len(t.data)), st: new(storage)}
	copy(r.data, t.data)
	if f, ok := starlark.AsFloat(y); ok {
		if side == starlark.Right {
			// f op t: compute into r as (f op t) elementwise.
			floats.ApplyScalarLeft(k, float32(f), r.data)
			return r, nil
		}
		floats.ApplyScalar(k, r.data, float32(f))
		return r, nil
	}
	u, ok := y.(*Tensor)
	if !ok {
		return nil, nil
	}
	if err := sameShape(name, t, u); err != nil {
		return nil, err
	}
	if err := u.readable(name); err != nil {
		return nil, err
	}
	if side == starlark.Right {
		copy(r.data, u.data)
		floats.Apply(k, r.data, t.data)
		return r, nil
	}
	floats.Apply(k, r.data, u.data)
	return r, nil
}

func sameShape(fn string, a, b *Tensor) error {
	if len(a.shape) != len(b.shape) {
		return nameErrf(fn, "shapes %s and %s differ", shapeString(a.shape), shapeString(b.shape))
	}
	for i := range a.shape {
		if a.shape[i] != b.shape[i] {
			return nameErrf(fn, "shapes %s and %s differ", shapeString(a.shape), shapeString(b.shape))
		}
	}
	return nil
}
