package builtins

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// impl is the Go side of a builtin function or method.
type impl = func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)

// fnDef documents and implements one builtin function of a module, or one method or field of a type.
// The same table builds the Starlark values and the reference page docs/builtins.md, so the two cannot drift.
type fnDef struct {
	sig  string // signature as shown to users, e.g. "zeros(*shape)"; a field has no parentheses
	doc  string // what it does, its errors and its cost, in a sentence or three
	fn   impl   // implementation; nil for a field
	name string // the name, derived from sig
}

// moduleDef is one predeclared module.
type moduleDef struct {
	name string   // the global name scripts use, e.g. "tensor"
	doc  string   // a paragraph for the reference
	fns  []fnDef  // functions and constants, in reference order
	vals valueMap // non-function members (constants), set by the constructor
}

// typeDef documents a Starlark type defined here: its fields and methods.
type typeDef struct {
	name    string  // type() of the values
	doc     string  // a paragraph for the reference
	members []fnDef // methods and fields
}

type valueMap = map[string]starlark.Value

// nameOf returns the identifier at the start of a signature.
func nameOf(sig string) string {
	for i, r := range sig {
		if r == '(' || r == ' ' {
			return sig[:i]
		}
	}
	return sig
}

// module builds the Starlark module value of m.
func (m *moduleDef) module() *starlarkstruct.Module {
	members := make(starlark.StringDict, len(m.fns))
	for i := range m.fns {
		f := &m.fns[i]
		f.name = nameOf(f.sig)
		if f.fn != nil {
			members[f.name] = starlark.NewBuiltin(m.name+"."+f.name, timed(m.name+"."+f.name, f.fn))
		} else if v, ok := m.vals[f.name]; ok {
			members[f.name] = v
		} else {
			panic(fmt.Sprintf("builtins: %s.%s has neither an implementation nor a value", m.name, f.name))
		}
	}
	return &starlarkstruct.Module{Name: m.name, Members: members}
}

// methodSet is the methods of one type, indexed by name, built once from its typeDef.
type methodSet struct {
	def     *typeDef
	methods map[string]impl
	names   []string // all member names (fields and methods), sorted
}

func newMethodSet(t *typeDef) *methodSet {
	ms := &methodSet{def: t, methods: map[string]impl{}}
	for i := range t.members {
		m := &t.members[i]
		m.name = nameOf(m.sig)
		if m.fn != nil {
			ms.methods[m.name] = timed(t.name+"."+m.name, m.fn)
		}
		ms.names = append(ms.names, m.name)
	}
	sort.Strings(ms.names)
	return ms
}

// bind returns the method called name bound to recv, or nil when there is none.
func (ms *methodSet) bind(recv starlark.Value, name string) starlark.Value {
	fn, ok := ms.methods[name]
	if !ok {
		return nil
	}
	return starlark.NewBuiltin(ms.def.name+"."+name, fn).BindReceiver(recv)
}
