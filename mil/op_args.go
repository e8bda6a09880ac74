package mil

import (
	"fmt"
	"slices"
)

// opArgs is one use of an op as type inference sees it.
type opArgs struct {
	def  *OpDef
	vals map[string][]ArgInfo
}

// validate applies the generic argument rules of the op's ArgDefs.
func (a *opArgs) validate() error {
	for name := range a.vals {
		if a.def.Arg(name) == nil {
			return a.unknownArg()
		}
	}
	for i := range a.def.Args {
		ad := &a.def.Args[i]
		ops, ok := a.vals[ad.Name]
		if !ok {
			if ad.Required {
				return fmt.Errorf("missing argument %q", ad.Name)
			}
			continue
		}
		if err := a.validateArg(ad, ops); err != nil {
			return err
		}
	}
	return nil
}

// unknownArg names the first unknown argument in name order (the same one whatever the map's order).
func (a *opArgs) unknownArg() error {
	var names []string
	for name := range a.vals {
		if a.def.Arg(name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return fmt.Errorf("unknown argument %q", names[0])
}

func (a *opArgs) validateArg(ad *ArgDef, ops []ArgInfo) error {
	switch {
	case ad.Tuple && len(ops) == 0:
		return fmt.Errorf("argument %q: empty tuple", ad.Name)
	case !ad.Tuple && len(ops) != 1:
		return fmt.Errorf("argument %q takes one value, got %d", ad.Name, len(ops))
	}
	for i, o := range ops {
		if err := a.validateOperand(ad, o); err != nil {
			what := fmt.Sprintf("argument %q", ad.Name)
			if ad.Tuple {
				what = fmt.Sprintf("argument %q, member %d,", ad.Name, i)
			}
			return fmt.Errorf("%s%w", what, err)
		}
	}
	return nil
}

// validateOperand checks one operand of argument ad; its error reads after the operand's name (" has
// type ...", ": type ...").
func (a *opArgs) validateOperand(ad *ArgDef, o ArgInfo) error {
	t := o.Type
	if t.Kind != ScalarKind && t.Kind != TensorKind {
		return fmt.Errorf(" has type %s, want a tensor or scalar", t)
	}
	if err := checkShape(t); err != nil {
		return fmt.Errorf(": %w", err)
	}
	switch {
	case ad.Shape == ScalarArg && t.Rank() != 0:
		return fmt.Errorf(" has type %s, want a scalar", t)
	case ad.Shape == VectorArg && t.Rank() != 1:
		return fmt.Errorf(" has type %s, want a rank-1 tensor", t)
	}
	if ad.DTypes != nil && !slices.Contains(ad.DTypes, t.DType) {
		return fmt.Errorf(" has dtype %s, want %s", t.DType, dtypeList(ad.DTypes))
	}
	if ad.SameAs != "" {
		if other, ok := a.vals[ad.SameAs]; ok && len(other) > 0 && other[0].Type.DType != t.DType {
			return fmt.Errorf(" has dtype %s, %s has %s", t.DType, ad.SameAs, other[0].Type.DType)
		}
	}
	if ad.Const && o.Value == nil {
		return fmt.Errorf(" must be a constant")
	}
	return nil
}

// checkShape rejects negative or zero dims and element counts beyond reason.
func checkShape(t Type) error {
	for _, d := range t.Shape {
		if d <= 0 {
			return fmt.Errorf("type %s has a dimension %d", t, d)
		}
	}
	if _, ok := shapeElements(t.Shape); !ok {
		return fmt.Errorf("type %s has too many elements", t)
	}
	return nil
}

func dtypeList(ds []DType) string {
	s := ""
	for i, d := range ds {
		switch {
		case i == 0:
		case i == len(ds)-1:
			s += " or "
		default:
			s += ", "
		}
		s += d.String()
	}
	return s
}

// has reports whether argument name was given.
func (a *opArgs) has(name string) bool {
	_, ok := a.vals[name]
	return ok
}

// typ returns the type of the single operand of argument name (zero Type when absent).
func (a *opArgs) typ(name string) Type {
	if ops := a.vals[name]; len(ops) > 0 {
		return ops[0].Type
	}
	return Type{}
}

// value returns the constant value of argument name, or nil.
func (a *opArgs) value(name string) *Value {
	if ops := a.vals[name]; len(ops) > 0 {
		return ops[0].Value
	}
	return nil
}

// ints returns the elements of a constant integer argument, or nil when absent.
func (a *opArgs) ints(name string) ([]int, error) {
	v := a.value(name)
	if v == nil {
		return nil, nil
	}
	out, err := v.Ints()
	if err != nil {
		return nil, fmt.Errorf("argument %q: %w", name, err)
	}
	if want, ok := shapeElements(v.Type.Shape); ok && len(out) != want {
		return nil, fmt.Errorf("argument %q: %s holds %d elements", name, v.Type, len(out))
	}
	return out, nil
}

// intOr returns a constant scalar integer argument, or def when absent.
func (a *opArgs) intOr(name string, def int) (int, error) {
	v, err := a.ints(name)
	if err != nil || v == nil {
		return def, err
	}
	if len(v) != 1 {
		return 0, fmt.Errorf("argument %q holds %d values, want 1", name, len(v))
	}
	return v[0], nil
}

// boolOr returns a constant bool argument, or def when absent.
func (a *opArgs) boolOr(name string, def bool) (bool, error) {
	v := a.value(name)
	if v == nil {
		return def, nil
	}
	b, err := v.Bool()
	if err != nil {
		return false, fmt.Errorf("argument %q: %w", name, err)
	}
	return b, nil
}

// bools returns a constant bool vector argument of length n, all false when absent.
func (a *opArgs) bools(name string, n int) ([]bool, error) {
	out := make([]bool, n)
	v := a.value(name)
	if v == nil {
		return out, nil
	}
	if len(v.Nums) != n || v.Type.NumElements() != n {
		return nil, fmt.Errorf("argument %q has %d elements, want %d", name, len(v.Nums), n)
	}
	for i, x := range v.Nums {
		out[i] = x != 0
	}
	return out, nil
}

// strOr returns a constant string argument, or def when absent.
func (a *opArgs) strOr(name, def string) (string, error) {
	v := a.value(name)
	if v == nil {
		return def, nil
	}
	s, err := v.Str()
	if err != nil {
		return "", fmt.Errorf("argument %q: %w", name, err)
	}
	return s, nil
}

// tensorType returns the type of a result: a scalar for rank 0, else a tensor.
func tensorType(dt DType, shape []int) Type {
	if len(shape) == 0 {
		return Scalar(dt)
	}
	return Tensor(dt, shape...)
}

// axis normalises an axis in [-rank, rank) to [0, rank).
func normAxis(name string, ax, rank int) (int, error) {
	if ax < -rank || ax >= rank {
		return 0, fmt.Errorf("argument %q: axis %d is out of range for rank %d", name, ax, rank)
	}
	if ax < 0 {
		ax += rank
	}
	return ax, nil
}

// normAxes normalises a list of distinct axes.
func normAxes(name string, axes []int, rank int) ([]int, error) {
	out := make([]int, len(axes))
	seen := make(map[int]bool, len(axes))
	for i, ax := range axes {
		n, err := normAxis(name, ax, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, fmt.Errorf("argument %q: axis %d appears twice", name, ax)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

func one(t Type) ([]Type, error) { return []Type{t}, nil }
