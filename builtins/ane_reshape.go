package builtins

import (
	"go.starlark.net/starlark"

	"github.com/anestar/anestar/ane"
)

// aneReshapeSteps is ane.reshape_steps(from_shape, to_shape): the shapes a reshape goes through in the
// forms a reference ran (ane.ReshapeSteps), as a list of lists, to_shape last.
func aneReshapeSteps(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fromV, toV starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "from_shape", &fromV, "to_shape", &toV); err != nil {
		return nil, err
	}
	from, err := intList(b.Name(), "from_shape", fromV)
	if err != nil {
		return nil, err
	}
	to, err := intList(b.Name(), "to_shape", toV)
	if err != nil {
		return nil, err
	}
	if len(from) != 4 || len(to) != 4 {
		return nil, nameErrf(b.Name(), "shapes %v and %v: want rank-4 shapes [N, C, H, W]", from, to)
	}
	nf, nt := 1, 1
	for i := range 4 {
		if from[i] < 1 || to[i] < 1 {
			return nil, nameErrf(b.Name(), "shapes %v and %v: every extent must be at least 1", from, to)
		}
		nf, nt = nf*from[i], nt*to[i]
	}
	if nf != nt {
		return nil, nameErrf(b.Name(), "%v has %d elements, %v %d: a reshape keeps the element count", from, nf, to, nt)
	}
	var steps []starlark.Value
	for _, s := range ane.ReshapeSteps(from, to) {
		l := make([]starlark.Value, len(s))
		for i, d := range s {
			l[i] = starlark.MakeInt(d)
		}
		steps = append(steps, starlark.NewList(l))
	}
	return starlark.NewList(steps), nil
}
