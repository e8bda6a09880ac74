package private

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anestar/anestar/mil"
)

// How the backend binds surfaces to the loaded model's ports, as the code that ran on hardware does.
// A program with one input and one output (every shipped kernel, which the ANE's single-I/O rule asks
// for) is bound by index, as maderix/ANE does (training/ane_runtime.h: it never reads the model's
// attributes): the order is then unambiguous. Where the loaded model's attributes describe its ports —
// [model modelAttributes] → NetworkStatusList[0] → LiveInputList / LiveOutputList, each entry a
// dictionary with the port's name (under "Name", as electricapp/ane-bridge-rs reads it on macOS 26 / M5,
// or "Symbol", as a macOS 26.3 / M3 Pro listing shows), "Type" and the dims Batches, Channels, Depth,
// Height and Width, output names ending in "@output" — they are used to check the dims and dtype, and a
// disagreement, or attributes that cannot be read, is a warning, never a failure. A program with several
// ports (the emulator's relaxed mode allows them; the ANE reorders them: ane-bridge-rs
// docs/MIL-CONSTRAINTS.md, "Ports are reordered") is bound by name, and refused when the attributes name
// no ports.

// portNameKeys are the keys under which a port's entry may give its name, in the order tried.
var portNameKeys = []string{"Name", "Symbol"}

// port is one input or output of a loaded model, as its LiveInputList or LiveOutputList reports it.
type port struct {
	name  string // the MIL name, without the framework's "@output" suffix; "" when the entry gives none
	dtype string // the framework's type name: "Float16", "Float32", ...; "" when not given
	dims  [5]int // Batches, Channels, Depth, Height, Width; all zero when not given
}

// portDimKeys are the keys of a port's dims, in the order of port.dims.
var portDimKeys = [5]string{"Batches", "Channels", "Depth", "Height", "Width"}

// portEntry is one entry of a LiveInputList or LiveOutputList: its string and number values by key
// (false when the key is missing or holds another kind of value).
type portEntry interface {
	str(key string) (string, bool)
	num(key string) (int64, bool)
}

// parsePort reads a port entry. Every key is optional: the name under the first of portNameKeys that
// holds a string, the type, and the dims only when all five are numbers; what is missing stays empty and
// is then not checked (portOrder).
func parsePort(e portEntry) port {
	var p port
	for _, k := range portNameKeys {
		if name, ok := e.str(k); ok {
			p.name = portName(name)
			break
		}
	}
	p.dtype, _ = e.str("Type")
	var dims [5]int
	for j, k := range portDimKeys {
		v, ok := e.num(k)
		if !ok {
			return p
		}
		dims[j] = int(v)
	}
	p.dims = dims
	return p
}

// outputSuffix ends the framework's names of output ports.
const outputSuffix = "@output"

// portName is the MIL name of a port the framework calls name.
func portName(name string) string { return strings.TrimSuffix(name, outputSuffix) }

// portDType is the MIL dtype of a framework type name, or false.
func portDType(s string) (mil.DType, bool) {
	switch s {
	case "Float16":
		return mil.FP16, true
	case "Float32":
		return mil.FP32, true
	}
	return 0, false
}

// checkPort compares what the model says of port pt with the program's spec s: "" when they agree or
// the model does not say, else what differs.
func checkPort(role string, s ioSpec, pt port) string {
	if pt.dtype != "" {
		if dt, ok := portDType(pt.dtype); !ok || dt != s.typ.DType {
			return fmt.Sprintf("%s %q: the loaded model's port holds %q, the program declares %s", role, s.name, pt.dtype, s.typ.DType)
		}
	}
	if pt.dims != ([5]int{}) {
		if want, ok := portDims(s.typ); !ok || want != pt.dims {
			return fmt.Sprintf("%s %q: the loaded model's port is [N C D H W] = %v, the program declares %s", role, s.name, pt.dims, s.typ)
		}
	}
	return ""
}

// portOrder binds the program's inputs or outputs (specs, in declaration or return order) to the
// model's ports: order[p] is the index in specs of the spec bound to port p. One spec is bound to port
// 0 by index, what the model says of its ports only checked (a disagreement is a warning). Several are
// bound by name: every spec must have exactly one port of its name, with its dims and dtype. The
// request builder passes the surfaces in this order.
func portOrder(role string, specs []ioSpec, ports []port) (order []int, warnings []string, err error) {
	if len(specs) == 1 {
		switch {
		case len(ports) != 1:
			warnings = append(warnings, fmt.Sprintf("the loaded model's attributes list %d %s ports, the program 1: bound by index", len(ports), role))
		case ports[0].name != "" && ports[0].name != specs[0].name:
			warnings = append(warnings, fmt.Sprintf("the loaded model names its %s port %q, the program %q: bound by index", role, ports[0].name, specs[0].name))
		}
		if len(ports) == 1 {
			if w := checkPort(role, specs[0], ports[0]); w != "" {
				warnings = append(warnings, w+" (bound by index; the program's shape is used)")
			}
		}
		return []int{0}, warnings, nil
	}
	if len(ports) != len(specs) {
		return nil, nil, fmt.Errorf("the loaded model has %d %s ports, the program %d", len(ports), role, len(specs))
	}
	byName := map[string]int{}
	for i, s := range specs {
		byName[s.name] = i
	}
	order = make([]int, len(ports))
	bound := make([]bool, len(specs))
	for p, pt := range ports {
		if pt.name == "" {
			return nil, nil, fmt.Errorf("the loaded model's %s port %d has no name (under any of the keys %v; it lists type %q, dims %v): "+
				"a program of %d %ss cannot be bound by name; give it one %s, as the ANE's single-I/O rule asks", role, p, portNameKeys, pt.dtype, pt.dims, len(specs), role, role)
		}
		i, ok := byName[pt.name]
		if !ok {
			return nil, nil, fmt.Errorf("the loaded model's %s port %d is %q, which the program does not declare", role, p, pt.name)
		}
		if bound[i] {
			return nil, nil, fmt.Errorf("the loaded model lists %s %q twice", role, pt.name)
		}
		bound[i] = true
		if msg := checkPort(role, specs[i], pt); msg != "" {
			return nil, nil, errors.New(msg)
		}
		order[p] = i
	}
	return order, nil, nil
}

// portDims is the [Batches, Channels, Depth, Height, Width] of a rank-4 [N, C, H, W] type.
func portDims(t mil.Type) ([5]int, bool) {
	if t.Rank() != 4 {
		return [5]int{}, false
	}
	return [5]int{t.Shape[0], t.Shape[1], 1, t.Shape[2], t.Shape[3]}, true
}

// inPortOrder returns xs, given in the program's order, in the order of the model's ports.
func inPortOrder[T any](xs []T, order []int) []T {
	out := make([]T, len(order))
	for p, i := range order {
		out[p] = xs[i]
	}
	return out
}

// portMap is how a program's inputs and outputs map onto the loaded model's ports: port p is input
// in[p] (output out[p]).
type portMap struct {
	in, out  []int
	warnings []string // what the model's attributes said against the program, or that they could not be read
}

// readPorts reads the ports of the loaded model m and binds them to the program's inputs and outputs
// (in declaration and return order), see portOrder. A program of one input and one output is bound by
// index even when the attributes cannot be read (a warning).
func readPorts(m model, inputs, outputs []ioSpec) (portMap, error) {
	livein, liveout, err := m.ports()
	if err != nil {
		if len(inputs) == 1 && len(outputs) == 1 {
			return portMap{in: []int{0}, out: []int{0}, warnings: []string{"reading the model's ports: " + err.Error() + "; bound by index"}}, nil
		}
		return portMap{}, fmt.Errorf("reading the model's ports: %w (a program of %d inputs and %d outputs is bound by name)", err, len(inputs), len(outputs))
	}
	var pm portMap
	var w []string
	if pm.in, w, err = portOrder("input", inputs, livein); err != nil {
		return portMap{}, err
	}
	pm.warnings = append(pm.warnings, w...)
	if pm.out, w, err = portOrder("output", outputs, liveout); err != nil {
		return portMap{}, err
	}
	pm.warnings = append(pm.warnings, w...)
	return pm, nil
}

// request builds m's request over one binding's surfaces, given in the program's order, passing each at
// the index of its port: what every binding's request builder calls.
func (pm portMap) request(m model, ins, outs []surface) (request, error) {
	return m.newRequest(inPortOrder(ins, pm.in), inPortOrder(outs, pm.out))
}
