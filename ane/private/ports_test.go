package private

import (
	"errors"
	"github.com/anestar/anestar/ane"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anestar/anestar/ane/anetest"
	"github.com/anestar/anestar/mil"
)

// frameworkType is the framework's name of a surface dtype.
func frameworkType(d mil.DType) string {
	switch d {
	case mil.FP16:
		return "Float16"
	case mil.FP32:
		return "Float32"
	}
	return d.String()
}

// portOf is the port the framework would report for a rank-4 value; output names get "@output".
func portOf(name string, t mil.Type, output bool) port {
	if output {
		name += outputSuffix
	}
	p := port{name: portName(name), dtype: frameworkType(t.DType)}
	if d, ok := portDims(t); ok {
		p.dims = d
	}
	return p
}

// programPorts returns the ports of p's main as the framework lists them: in declaration order, or
// reversed when reorder is set (the framework does not keep the program's order).
func programPorts(p *mil.Program, reorder bool) (ins, outs []port) {
	main := mainOf(p)
	types := map[string]mil.Type{}
	for _, v := range main.Inputs {
		types[v.Name] = v.Type
		ins = append(ins, portOf(v.Name, v.Type, false))
	}
	for _, op := range main.Ops {
		for _, r := range op.Results {
			types[r.Name] = r.Type
		}
	}
	for _, o := range main.Outputs {
		outs = append(outs, portOf(o.Name, types[o.Name], true))
	}
	if reorder {
		slices.Reverse(ins)
		slices.Reverse(outs)
	}
	return ins, outs
}

func mainOf(p *mil.Program) *mil.Func {
	for _, f := range p.Funcs {
		if f.Name == "main" {
			return f
		}
	}
	return nil
}

func TestPortOrder(t *testing.T) {
	x, y := mil.Tensor(mil.FP16, 1, 4, 1, 32), mil.Tensor(mil.FP32, 1, 2, 1, 64)
	specs := []ioSpec{{name: "a", typ: x}, {name: "b", typ: y}}
	pa, pb := portOf("a", x, true), portOf("b", y, true)
	if pa.name != "a" || pa.dims != [5]int{1, 4, 1, 1, 32} || pa.dtype != "Float16" {
		t.Fatalf("port of a: %+v", pa)
	}
	order, warns, err := portOrder("output", specs, []port{pb, pa})
	if err != nil || !reflect.DeepEqual(order, []int{1, 0}) || len(warns) != 0 {
		t.Fatalf("reordered ports: %v, %v; want [1 0]", order, err)
	}
	if got := inPortOrder([]string{"sa", "sb"}, order); !reflect.DeepEqual(got, []string{"sb", "sa"}) {
		t.Errorf("surfaces in port order: %q", got)
	}
	wide, half := pa, pa
	wide.dims[4] = 64
	half.dtype = "Float32"
	bad := []struct {
		ports []port
		want  string
	}{
		{[]port{pa}, "has 1 output ports, the program 2"},
		{[]port{pa, {name: "c", dtype: "Float32", dims: pb.dims}}, `port 1 is "c", which the program does not declare`},
		{[]port{pa, pa}, `lists output "a" twice`},
		{[]port{wide, pb}, `output "a": the loaded model's port is [N C D H W] = [1 4 1 1 64], the program declares tensor<fp16, [1, 4, 1, 32]>`},
		{[]port{half, pb}, `output "a": the loaded model's port holds "Float32", the program declares fp16`},
		{[]port{{dtype: "Float16", dims: pa.dims}, pb}, `output port 0 has no name (under any of the keys [Name Symbol]`},
	}
	for _, c := range bad {
		if _, _, err := portOrder("output", specs, c.ports); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.ports, err, c.want)
		}
	}
}

// TestPortsBoundByName compiles through a fake framework that lists the ports in reverse order and
// checks that the request of the kernel, and of a further binding, gets every surface at the port of its
// name, not at its declared position.
func TestPortsBoundByName(t *testing.T) {
	isolateCount(t)
	p := testProgram()
	p.Funcs[0].Outputs = append(p.Funcs[0].Outputs, mil.Ref{Name: "r"}) // outputs (y, r)
	for _, reorder := range []bool{false, true} {
		d := newFakeDriver(t.TempDir())
		d.reorder = reorder
		k, err := compile(d, p, testWeights(), ane.ChipAll)
		if err != nil {
			t.Fatal(err)
		}
		b, err := k.Bind()
		if err != nil {
			t.Fatal(err)
		}
		ins, outs := programPorts(p, reorder)
		for bi, bd := range []*Binding{&k.Binding, b.(*Binding)} {
			req := d.requests[bi]
			for i, pt := range ins {
				if want := bd.mems[k.ports.in[i]]; req.in[i] != want.s || want.name != pt.name {
					t.Errorf("reorder %v, binding %d: input port %d (%s) got surface %q", reorder, bi, i, pt.name, want.name)
				}
			}
			for j, pt := range outs {
				want := bd.mems[len(bd.inputs)+k.ports.out[j]]
				if req.out[j] != want.s || want.name != pt.name {
					t.Errorf("reorder %v, binding %d: output port %d (%s) got surface %q", reorder, bi, j, pt.name, want.name)
				}
			}
		}
		// The kernel's own surfaces stay in the program's order.
		if k.Outputs()[0].Name() != "y" || k.Outputs()[1].Name() != "r" || k.Inputs()[0].Name() != "x" {
			t.Errorf("reorder %v: kernel surfaces out of the program's order", reorder)
		}
		k.Close()
	}
}

// TestPortMismatchFailsCompile checks that a port whose name, dims or dtype disagree with the program's
// fails the compile with a message, and that everything made so far is released.
func TestPortMismatchFailsCompile(t *testing.T) {
	isolateCount(t)
	cases := []struct {
		name string
		edit func(ins, outs []port) ([]port, []port)
		want string
	}{
		{"renamed", func(ins, outs []port) ([]port, []port) { ins[0].name = "z"; return ins, outs }, `input port 0 is "z"`},
		{"dims", func(ins, outs []port) ([]port, []port) { ins[0].dims[1] = 8; return ins, outs }, `input "x": the loaded model's port is [N C D H W] = [1 8 1 1 32]`},
		{"dtype", func(ins, outs []port) ([]port, []port) { ins[1].dtype = "Float16"; return ins, outs }, `input "s": the loaded model's port holds "Float16", the program declares fp32`},
		{"missing", func(ins, outs []port) ([]port, []port) { return ins[:1], outs }, "has 1 input ports, the program 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDriver(t.TempDir())
			d.editPorts = c.edit
			_, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "ane load: ") {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if !slices.Contains(d.log, "unload") || !d.models[0].released || len(d.surfaces) != 0 {
				t.Errorf("not cleaned up: calls %q, %d surfaces", d.log, len(d.surfaces))
			}
		})
	}
}

// TestLoadRetriedOnce checks the one retry of load after loadRetryDelay, as maderix/ANE's bridge does.
func TestLoadRetriedOnce(t *testing.T) {
	isolateCount(t)
	old := loadRetryDelay
	loadRetryDelay = time.Millisecond
	t.Cleanup(func() { loadRetryDelay = old })
	d := newFakeDriver(t.TempDir())
	d.failLoads = 1
	k, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatalf("one failed load: %v", err)
	}
	k.Close()
	n := 0
	for _, c := range d.log {
		if c == "load" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d loads, want 2: %q", n, d.log)
	}
	d = newFakeDriver(t.TempDir())
	d.failLoads = 2
	if _, err := compile(d, testProgram(), testWeights(), ane.ChipAll); err == nil || !strings.Contains(err.Error(), "and again after") {
		t.Errorf("two failed loads: %v", err)
	}
}

// TestRefusalsBeforeTheDevice compiles every program of the conformance suite's refusals through the
// fake framework: each is refused with its rule's message and nothing reaches the framework.
func TestRefusalsBeforeTheDevice(t *testing.T) {
	isolateCount(t)
	for _, r := range anetest.Refusals() {
		t.Run(r.Name, func(t *testing.T) {
			p, err := mil.Parse("refused.mil", []byte(r.Src))
			if err != nil {
				t.Fatal(err)
			}
			d := newFakeDriver(t.TempDir())
			_, err = compile(d, p, nil, ane.ChipAll)
			if err == nil || !strings.Contains(err.Error(), r.Want) || !strings.HasPrefix(err.Error(), "ane compile: the ANE refuses this program") {
				t.Fatalf("error %v, want one containing %q", err, r.Want)
			}
			if len(d.log) != 0 {
				t.Errorf("reached the framework: %q", d.log)
			}
		})
	}
}

// singleIOProgram is testProgram with its one fp16 input x and one output: the shape of every shipped
// kernel, which is bound by index.
func singleIOProgram() *mil.Program {
	p := testProgram()
	p.Funcs[0].Inputs = p.Funcs[0].Inputs[:1]
	return p
}

// A program of one input and one output is bound by index, as maderix/ANE binds: whatever the model's
// attributes say of the port — its name under Symbol instead of Name, no name at all, no attributes,
// other dims or dtype — the compile succeeds, each disagreement a warning naming it.
func TestSingleIOBoundByIndex(t *testing.T) {
	isolateCount(t)
	cases := []struct {
		name     string
		edit     func(ins, outs []port) ([]port, []port)
		errPorts error
		warn     string // "" for none
	}{
		{"as listed", nil, nil, ""},
		{"no names", func(ins, outs []port) ([]port, []port) { ins[0].name, outs[0].name = "", ""; return ins, outs }, nil, ""},
		{"no dims or type", func(ins, outs []port) ([]port, []port) {
			ins[0].dims, ins[0].dtype = [5]int{}, ""
			return ins, outs
		}, nil, ""},
		{"other name", func(ins, outs []port) ([]port, []port) { outs[0].name = "z"; return ins, outs }, nil, `names its output port "z", the program "y": bound by index`},
		{"wrong dims", func(ins, outs []port) ([]port, []port) { ins[0].dims[1] = 8; return ins, outs }, nil, `input "x": the loaded model's port is [N C D H W] = [1 8 1 1 32]`},
		{"wrong dtype", func(ins, outs []port) ([]port, []port) { outs[0].dtype = "Float32"; return ins, outs }, nil, `output "y": the loaded model's port holds "Float32"`},
		{"no list", func(ins, outs []port) ([]port, []port) { return nil, outs }, nil, "list 0 input ports, the program 1: bound by index"},
		{"unreadable", nil, errors.New("NetworkStatusList is missing, empty or not an array"), "reading the model's ports: NetworkStatusList is missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var warned strings.Builder
			old := warnOut
			warnOut = &warned
			defer func() { warnOut = old }()
			d := newFakeDriver(t.TempDir())
			d.editPorts, d.errPorts = c.edit, c.errPorts
			k, err := compile(d, singleIOProgram(), testWeights(), ane.ChipAll)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			defer k.Close()
			if !reflect.DeepEqual(k.ports.in, []int{0}) || !reflect.DeepEqual(k.ports.out, []int{0}) {
				t.Errorf("ports %+v, want index 0 each way", k.ports)
			}
			if c.warn == "" && warned.Len() > 0 || c.warn != "" && !strings.Contains(warned.String(), c.warn) {
				t.Errorf("warnings %q, want %q", warned.String(), c.warn)
			}
		})
	}
}

// A program of several ports cannot be bound without the names: unreadable attributes refuse it.
func TestSeveralPortsNeedNames(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	d.errPorts = errors.New("LiveInputList is missing or not an array")
	if _, err := compile(d, testProgram(), testWeights(), ane.ChipAll); err == nil || !strings.Contains(err.Error(), "bound by name") {
		t.Fatalf("error %v, want a refusal saying several ports are bound by name", err)
	}
}

// mapEntry is a port entry as a map: strings and int64s by key.
type mapEntry map[string]any

func (e mapEntry) str(k string) (string, bool) { s, ok := e[k].(string); return s, ok }
func (e mapEntry) num(k string) (int64, bool)  { n, ok := e[k].(int64); return n, ok }

// The attributes' spellings seen on hardware: Name (ane-bridge-rs, macOS 26 / M5), Symbol (a macOS 26.3
// / M3 Pro listing), neither; dims complete or not.
func TestParsePort(t *testing.T) {
	dims := map[string]any{"Batches": int64(1), "Channels": int64(4), "Depth": int64(1), "Height": int64(1), "Width": int64(32)}
	with := func(kv ...any) mapEntry {
		e := mapEntry{}
		for k, v := range dims {
			e[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(e, kv[i].(string))
			} else {
				e[kv[i].(string)] = kv[i+1]
			}
		}
		return e
	}
	full := [5]int{1, 4, 1, 1, 32}
	for _, c := range []struct {
		e    mapEntry
		want port
	}{
		{with("Name", "y@output", "Type", "Float16"), port{"y", "Float16", full}},
		{with("Symbol", "y@output", "Type", "Float16"), port{"y", "Float16", full}},
		{with("Name", "a", "Symbol", "b"), port{"a", "", full}},
		{with("Type", "Float32"), port{"", "Float32", full}},
		{with("Name", int64(3), "Symbol", "x"), port{"x", "", full}},
		{with("Name", "x", "Width", nil), port{"x", "", [5]int{}}},
		{with("Name", "x", "Depth", "one"), port{"x", "", [5]int{}}},
	} {
		if got := parsePort(c.e); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.e, got, c.want)
		}
	}
}
