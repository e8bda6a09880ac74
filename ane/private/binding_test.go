package private

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/anestar/anestar/ane"
)

// TestBindSequence: a binding is its own surfaces and request over the kernel's one loaded model, all
// made by Bind; its Eval creates nothing and touches only its own request; Close releases only it, and
// the kernel's Close releases what is left.
func TestBindSequence(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	be := &Backend{drv: d}
	kern, err := compile(be.drv, testProgram(), testWeights(), ane.ChipAll) // the ports as declared: the driver sees two inputs
	if err != nil {
		t.Fatal(err)
	}
	k := kern
	before := be.Compiles()
	d.log = nil
	var bs []*Binding
	for range 2 {
		b, err := k.Bind()
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b.(*Binding))
	}
	want := []string{"surface 256 bytes", "surface 384 bytes", "surface 256 bytes", "newRequest 2 in 1 out",
		"surface 256 bytes", "surface 384 bytes", "surface 256 bytes", "newRequest 2 in 1 out"}
	if !reflect.DeepEqual(d.log, want) {
		t.Errorf("Bind calls:\n got %q\nwant %q", d.log, want)
	}
	if be.Compiles() != before || len(d.models) != 1 {
		t.Errorf("Bind compiled: Compiles %d -> %d, %d models", before, be.Compiles(), len(d.models))
	}
	reqs := []*fakeRequest{k.req.(*fakeRequest), bs[0].req.(*fakeRequest), bs[1].req.(*fakeRequest)}
	for i, r := range reqs {
		for j, s := range r.in {
			if s != bindingAt(k, bs, i).mems[j].s {
				t.Errorf("binding %d: request input %d is not the binding's own surface", i, j)
			}
		}
	}

	d.log = nil
	for range 3 {
		if err := bs[1].Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.log) != 0 {
		t.Errorf("Eval of a binding called the driver: %q", d.log)
	}
	if got := []int{reqs[0].evals, reqs[1].evals, reqs[2].evals}; !reflect.DeepEqual(got, []int{0, 0, 3}) {
		t.Errorf("request evals %v after 3 evals of binding 2, want [0 0 3]", got)
	}

	if err := bs[0].Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"release request"}; !reflect.DeepEqual(d.log, want) {
		t.Errorf("binding Close calls %q, want %q", d.log, want)
	}
	for i, s := range d.surfaces {
		if freed := i >= 3 && i < 6; s.freed != freed {
			t.Errorf("after closing binding 1: surface %d freed = %v, want %v", i, s.freed, freed)
		}
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Errorf("kernel Eval after closing a binding: %v", err)
	}

	d.log = nil
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"release request", "release request", "unload", "release model"}; !reflect.DeepEqual(d.log, want) {
		t.Errorf("kernel Close calls %q, want %q", d.log, want)
	}
	for i, s := range d.surfaces {
		if !s.freed {
			t.Errorf("surface %d not freed after the kernel's Close", i)
		}
	}
	if err := bs[1].Eval(context.Background()); !errors.Is(err, ane.ErrClosed) {
		t.Errorf("binding Eval after the kernel's Close: %v", err)
	}
	if _, err := k.Bind(); !errors.Is(err, ane.ErrClosed) {
		t.Errorf("Bind after Close: %v", err)
	}
}

// bindingAt returns binding i of k: the kernel's own for 0, else bs[i-1].
func bindingAt(k *Kernel, bs []*Binding, i int) *Binding {
	if i == 0 {
		return &k.Binding
	}
	return bs[i-1]
}

// TestBindFailure: a Bind that fails releases what it made and leaves the kernel working.
func TestBindFailure(t *testing.T) {
	isolateCount(t)
	for _, c := range []struct {
		name string
		set  func(d *fakeDriver)
		want string
	}{
		{"surface", func(d *fakeDriver) { d.failSurface = len(d.surfaces) + 1 }, `ane bind: surface "s": no memory`},
		{"request", func(d *fakeDriver) { d.errRequest = fmt.Errorf("no request") }, "ane bind: no request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDriver(t.TempDir())
			kern, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
			if err != nil {
				t.Fatal(err)
			}
			defer kern.Close()
			first := len(d.surfaces)
			c.set(d)
			if _, err := kern.Bind(); err == nil || err.Error() != c.want {
				t.Fatalf("Bind: got %v, want %q", err, c.want)
			}
			for i, s := range d.surfaces[first:] {
				if !s.freed {
					t.Errorf("surface %d of the failed Bind not freed", first+i)
				}
			}
			for i, s := range d.surfaces[:first] {
				if s.freed {
					t.Errorf("the kernel's surface %d freed by a failed Bind", i)
				}
			}
			d.errRequest, d.failSurface = nil, -1
			if err := kern.Eval(context.Background()); err != nil {
				t.Errorf("kernel Eval after a failed Bind: %v", err)
			}
		})
	}
}
