package builtins

import (
	"github.com/anestar/anestar/ane"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// aneEligible is ane.eligible(program): the verdict of ane.Eligible as a struct.
func (s *session) aneEligible(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var p *milProgram
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "program", &p); err != nil {
		return nil, err
	}
	prog, _, err := p.build(b.Name())
	if err != nil {
		return nil, err
	}
	return verdictValue(ane.EligibleOn(prog, s.chip())), nil
}

// verdictValue is a verdict as Starlark sees it: struct(support, findings, ops).
func verdictValue(v ane.Verdict) starlark.Value {
	var findings, ops []starlark.Value
	for _, f := range v.Findings {
		findings = append(findings, starlarkstruct.FromStringDict(starlark.String("finding"), starlark.StringDict{
			"support": starlark.String(f.Support.String()),
			"rule":    starlark.String(f.Rule),
			"what":    starlark.String(f.What),
			"reason":  starlark.String(f.Reason),
			"fix":     starlark.String(f.Fix),
			"text":    starlark.String(f.String()),
		}))
	}
	for _, k := range v.Ops() {
		ops = append(ops, starlark.String(k))
	}
	return starlarkstruct.FromStringDict(starlark.String("verdict"), starlark.StringDict{
		"support":  starlark.String(v.Support().String()),
		"findings": starlark.NewList(findings),
		"ops":      starlark.NewList(ops),
	})
}
