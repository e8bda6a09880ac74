package builtins

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"go.starlark.net/starlark"
)

// sprintf is printf-style formatting with widths and precisions, which Starlark's % operator lacks:
// sprintf("%.4f", loss), sprintf("%5d", n), sprintf("%-12s|", name). Verbs: d (int), f, e, g (float
// or int), s and v (any value, as str()), x (int), and %% for a percent sign; flags - + 0 and space,
// a width and a precision, as in Go and C. A verb that does not fit its argument, or a count of
// arguments that does not match the verbs, is an error. Infinities and NaN are written as Starlark
// writes them (+inf, -inf, nan).
func sprintf(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, nameErrf(b.Name(), "takes no keyword arguments")
	}
	if len(args) == 0 {
		return nil, nameErrf(b.Name(), "missing format string")
	}
	format, ok := starlark.AsString(args[0])
	if !ok {
		return nil, nameErrf(b.Name(), "format is %s, want string", args[0].Type())
	}
	vals := args[1:]
	var out strings.Builder
	n := 0 // arguments used
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			out.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+0 #.0123456789", format[j]) >= 0 {
			j++
		}
		if j == len(format) {
			return nil, nameErrf(b.Name(), "format %q ends inside a verb", format)
		}
		spec, verb := format[i:j], format[j]
		i = j
		if verb == '%' {
			if spec != "%" {
				return nil, nameErrf(b.Name(), "format %q: %%%% takes no flags", format)
			}
			out.WriteByte('%')
			continue
		}
		if n == len(vals) {
			return nil, nameErrf(b.Name(), "format %q has more verbs than the %d arguments", format, len(vals))
		}
		arg, err := formatArg(verb, vals[n])
		if err != nil {
			return nil, nameErrf(b.Name(), "argument %d: %w", n+1, err)
		}
		if f, ok := arg.(float64); ok && (math.IsInf(f, 0) || math.IsNaN(f)) {
			// inf, -inf and nan as Starlark writes them, in the width (the precision would cut them).
			spec, verb, arg = strings.Split(spec, ".")[0], 's', starlark.Float(f).String()
		}
		fmt.Fprintf(&out, spec+string(verb), arg)
		n++
	}
	if n != len(vals) {
		return nil, nameErrf(b.Name(), "format %q has %d verbs for %d arguments", format, n, len(vals))
	}
	return starlark.String(out.String()), nil
}

// formatArg converts v to the Go value that verb formats, or says why it cannot.
func formatArg(verb byte, v starlark.Value) (any, error) {
	switch verb {
	case 's', 'v':
		if s, ok := starlark.AsString(v); ok {
			return s, nil
		}
		return v.String(), nil
	case 'd', 'x':
		if i, ok := v.(starlark.Int); ok {
			if i64, ok := i.Int64(); ok {
				return i64, nil
			}
			return i.BigInt(), nil
		}
	case 'f', 'e', 'g':
		switch x := v.(type) {
		case starlark.Float:
			return float64(x), nil
		case starlark.Int:
			f, _ := new(big.Float).SetInt(x.BigInt()).Float64()
			return f, nil
		}
	default:
		return nil, fmt.Errorf("unknown verb %%%c (want d, f, e, g, s, v or x)", verb)
	}
	return nil, fmt.Errorf("%%%c cannot format a %s", verb, v.Type())
}
