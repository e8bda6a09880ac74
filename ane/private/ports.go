package private

import (
	"fmt"
	"strings"

	"github.com/anestar/anestar/mil"
)

// The framework does not keep the order in which a program declares its inputs and outputs: a graph
// declaring outputs (a, b) can hand back b at port 0 (electricapp/ane-bridge-rs docs/MIL-CONSTRAINTS.md,
// "Ports are reordered"). After load the backend reads the ports as the loaded model lists them —
// [model modelAttributes] → NetworkStatusList[0] → LiveInputList / LiveOutputList, each entry a
// dictionary of Name, Type, Batches, Channels, Depth, Height and Width, output names ending in "@output"
// (ane-bridge-rs c/src/ane_bridge.m, derive_specs_from_attrs) — binds every surface to the port of its
// name, and checks each port's dims and dtype against the program's.

// port is one input or output of a loaded model, as its LiveInputList or LiveOutputList reports it.
type port struct {
	name  string // the MIL name, without the framework's "@output" suffix
	dtype string // the framework's type name: "Float16", "Float32", ...
	dims  [5]int // Batches, Channels, Depth, Height, Width
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

// portOrder binds the program's inputs or outputs (specs, in declaration or return order) to the
// model's ports of the same names: order[p] is the index in specs of the spec bound to port p. Every
// spec must have exactly one port, with the spec's dims ([N, C, H, W] = Batches, Channels, Height,
// Width, Depth 1) and dtype. The request builder passes the surfaces in this order.
func portOrder(role string, specs []ioSpec, ports []port) ([]int, error) {
	if len(ports) != len(specs) {
		return nil, fmt.Errorf("the loaded model has %d %s ports, the program %d", len(ports), role, len(specs))
	}
	byName := map[string]int{}
	for i, s := range specs {
		byName[s.name] = i
	}
	order := make([]int, len(ports))
	bound := make([]bool, len(specs))
	for p, pt := range ports {
		i, ok := byName[pt.name]
		if !ok {
			return nil, fmt.Errorf("the loaded model's %s port %d is %q, which the program does not declare", role, p, pt.name)
		}
		if bound[i] {
			return nil, fmt.Errorf("the loaded model lists %s %q twice", role, pt.name)
		}
		bound[i] = true
		s := specs[i]
		dt, ok := portDType(pt.dtype)
		if !ok || dt != s.typ.DType {
			return nil, fmt.Errorf("%s %q: the loaded model's port holds %q, the program declares %s", role, s.name, pt.dtype, s.typ.DType)
		}
		if want, ok := portDims(s.typ); !ok || want != pt.dims {
			return nil, fmt.Errorf("%s %q: the loaded model's port is [N C D H W] = %v, the program declares %s", role, s.name, pt.dims, s.typ)
		}
		order[p] = i
	}
	return order, nil
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
type portMap struct{ in, out []int }

// readPorts reads the ports of the loaded model m and binds them to the program's inputs and outputs
// (in declaration and return order) by name, checking dims and dtypes (portOrder).
func readPorts(m model, inputs, outputs []ioSpec) (portMap, error) {
	livein, liveout, err := m.ports()
	if err != nil {
		return portMap{}, fmt.Errorf("reading the model's ports: %w", err)
	}
	var pm portMap
	if pm.in, err = portOrder("input", inputs, livein); err != nil {
		return portMap{}, err
	}
	if pm.out, err = portOrder("output", outputs, liveout); err != nil {
		return portMap{}, err
	}
	return pm, nil
}

// request builds m's request over one binding's surfaces, given in the program's order, passing each at
// the index of its port: what every binding's request builder calls.
func (pm portMap) request(m model, ins, outs []surface) (request, error) {
	return m.newRequest(inPortOrder(ins, pm.in), inPortOrder(outs, pm.out))
}
