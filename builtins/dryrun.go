package builtins

import (
	"context"
	"fmt"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
)

// CheckedProgram describes one program that ane.compile checked in a dry run (Config.DryRun).
type CheckedProgram struct {
	Pos         string      // where the script called ane.compile, "file:line:col"
	Func        string      // the Starlark function that called it, "<toplevel>" at top level
	From        string      // when Func is a function, the top-level line of the main script that led to the call
	Inputs      []*mil.Var  // main's inputs, with their types
	Outputs     []*mil.Var  // main's outputs, with their types
	Ops         int         // ops of main other than consts
	Consts      int         // const ops of main
	WeightBytes int         // bytes of the program's weight files
	Verdict     ane.Verdict // what the ANE is known to do with it (ane.Eligible)
}

// Where says where the program was compiled: "file:line:col", then " in FUNC" inside a function and
// " from line L" (or " from file:line:col" in another file) for the top-level line that led there.
func (c CheckedProgram) Where() string {
	where := c.Pos
	if c.Func != "" && c.Func != "<toplevel>" {
		where += " in " + c.Func
	}
	if c.From != "" {
		from := c.From
		if file, lineCol, ok := cutPos(c.From); ok {
			if f, _, _ := cutPos(c.Pos); f == file {
				line, _, _ := strings.Cut(lineCol, ":")
				from = "line " + line
			}
		}
		where += " from " + from
	}
	return where
}

// cutPos splits "file:line:col" into the file and "line:col".
func cutPos(pos string) (file, lineCol string, ok bool) {
	i := strings.LastIndexByte(pos, ':')
	if i < 0 {
		return "", "", false
	}
	j := strings.LastIndexByte(pos[:i], ':')
	if j < 0 {
		return "", "", false
	}
	return pos[:j], pos[j+1:], true
}

// String returns a one-line summary: where, the I/O types and the op count.
func (c CheckedProgram) String() string {
	return fmt.Sprintf("%s: %s -> %s, %d ops, %d consts, %d weight bytes",
		c.Where(), varTypes(c.Inputs), varTypes(c.Outputs), c.Ops, c.Consts, c.WeightBytes)
}

func varTypes(vs []*mil.Var) string {
	s := "("
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += v.Name + " " + v.Type.String()
	}
	return s + ")"
}

// chip is the chip whose limits the session's programs are checked against: its settings' (Config
// refuses an unknown name at the start).
func (s *session) chip() ane.Chip {
	c, err := ane.ParseChip(s.cfg.Settings.Chip)
	if err != nil {
		return ane.ChipAll
	}
	return c
}

// dryCompile is ane.compile in a dry run: it checks the program and its weights, judges it against the
// hardware's rules (ane.Eligible), records what it checked, and returns a kernel whose surfaces exist but
// which cannot be evaluated. A program the ANE refuses is recorded, not an error, so that a dry run goes
// on and lists every kernel's verdict. Nothing reaches the backend, so nothing counts against the compile
// budget.
func (s *session) dryCompile(thread *starlark.Thread, fn string, prog *mil.Program, w mil.Weights) (ane.Kernel, error) {
	if err := mil.Check(prog); err != nil {
		return nil, nameErr(fn, err)
	}
	if err := mil.CheckWeights(prog, w); err != nil {
		return nil, nameErr(fn, err)
	}
	var layout *ane.Layout
	if !s.cfg.Settings.Relaxed { // checked as it is compiled: packed
		pp, pw, l, err := ane.PackOn(prog, w, s.chip())
		switch {
		case err == nil:
			prog, w, layout = pp, pw, l
		case ane.EligibleOn(prog, s.chip()).Err() == nil:
			return nil, nameErr(fn, err)
		} // else the declared ports break a rule already: their verdict is recorded as it is
	}
	main := prog.Main()
	if main == nil {
		return nil, nameErrf(fn, "the program has no func main")
	}
	types := map[string]*mil.Var{}
	for _, in := range main.Inputs {
		types[in.Name] = in
	}
	c := CheckedProgram{Inputs: main.Inputs, Verdict: ane.EligibleOn(prog, s.chip())}
	for _, op := range main.Ops {
		if op.Kind == "const" {
			c.Consts++
		} else {
			c.Ops++
		}
		for _, r := range op.Results {
			types[r.Name] = r
		}
	}
	for _, out := range main.Outputs {
		v := types[out.Name]
		if v == nil {
			return nil, nameErrf(fn, "output %s is not defined", out.Name)
		}
		c.Outputs = append(c.Outputs, v)
	}
	for _, b := range w {
		c.WeightBytes += len(b)
	}
	caller := thread.CallFrame(1)
	c.Pos, c.Func = caller.Pos.String(), caller.Name
	if stack := thread.CallStack(); len(stack) > 2 && stack[0].Name == "<toplevel>" {
		c.From = stack[0].Pos.String()
	}
	dk, err := newDryKernel(c.Pos, c.Inputs, c.Outputs)
	if err != nil {
		return nil, nameErr(fn, err)
	}
	k, err := ane.WithLayout(dk, layout)
	if err != nil {
		return nil, nameErr(fn, err)
	}
	s.checked = append(s.checked, c)
	return k, nil
}

// dryKernel is the kernel of a dry run, and each of its bindings: real surfaces, no program.
type dryKernel struct {
	where           string // the ane.compile call
	inputs, outputs []*ane.Surface
}

var _ ane.Kernel = (*dryKernel)(nil)

// newDryKernel makes heap surfaces of the types of ins and outs.
func newDryKernel(where string, ins, outs []*mil.Var) (*dryKernel, error) {
	k := &dryKernel{where: where}
	for _, v := range ins {
		sf, err := ane.NewHeapSurface(v.Name, v.Type)
		if err != nil {
			return nil, fmt.Errorf("input %w", err)
		}
		k.inputs = append(k.inputs, sf)
	}
	for _, v := range outs {
		sf, err := ane.NewHeapSurface(v.Name, v.Type)
		if err != nil {
			return nil, fmt.Errorf("output %w", err)
		}
		k.outputs = append(k.outputs, sf)
	}
	return k, nil
}

func (k *dryKernel) Inputs() []*ane.Surface  { return k.inputs }
func (k *dryKernel) Outputs() []*ane.Surface { return k.outputs }
func (k *dryKernel) Close() error            { return nil }

// Bind makes another set of surfaces of the same types, which cannot be evaluated either.
func (k *dryKernel) Bind() (ane.Binding, error) {
	vars := func(ss []*ane.Surface) []*mil.Var {
		var vs []*mil.Var
		for _, s := range ss {
			vs = append(vs, &mil.Var{Name: s.Name(), Type: s.Type()})
		}
		return vs
	}
	b, err := newDryKernel(k.where, vars(k.inputs), vars(k.outputs))
	if err != nil {
		return nil, err
	}
	return b, nil
}

// Eval is an error: a dry run checks programs and compiles nothing.
func (k *dryKernel) Eval(context.Context) error {
	return fmt.Errorf("dry run: the kernel compiled at %s was only checked; stop before evaluating kernels when process.dry_run is True", k.where)
}

// Input is the surface of the input called name.
func (k *dryKernel) Input(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(k.inputs, name, "input")
}

// Output is the surface of the output called name.
func (k *dryKernel) Output(name string) (*ane.Surface, error) {
	return ane.SurfaceNamed(k.outputs, name, "output")
}
