package builtins

import (
	"fmt"

	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// MaxJSONDepth is the deepest nesting of arrays and objects that json.decode (and the reading of
// checkpoint metadata) accepts, as encoding/json's own limit: go.starlark.net's decoder recurses
// once per level, and Go's runtime aborts the process, uncatchably, when the stack runs out.
const MaxJSONDepth = 10000

// jsonDepthError returns an error when text nests arrays and objects deeper than MaxJSONDepth,
// naming the byte offset where the limit is passed. Brackets inside strings do not count.
func jsonDepthError(text string) error {
	depth := 0
	inString, escaped := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			if depth > MaxJSONDepth {
				return fmt.Errorf("JSON nests arrays and objects more than %d deep (at byte %d)", MaxJSONDepth, i)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return nil
}

// jsonModule is go.starlark.net's json module with a decode that refuses too deep a nesting.
var jsonModule = func() *starlarkstruct.Module {
	members := starlark.StringDict{}
	for k, v := range json.Module.Members {
		members[k] = v
	}
	members["decode"] = starlark.NewBuiltin("json.decode", jsonDecode)
	return &starlarkstruct.Module{Name: json.Module.Name, Members: members}
}()

// jsonDecode is json.decode after a depth check.
func jsonDecode(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		if s, ok := starlark.AsString(args[0]); ok {
			if err := jsonDepthError(s); err != nil {
				return nil, nameErr(b.Name(), err)
			}
		}
	}
	return starlark.Call(thread, json.Module.Members["decode"], args, kwargs)
}

// decodeJSON decodes text as json.decode does, with the depth check.
func decodeJSON(thread *starlark.Thread, text string) (starlark.Value, error) {
	if err := jsonDepthError(text); err != nil {
		return nil, err
	}
	return starlark.Call(thread, json.Module.Members["decode"], starlark.Tuple{starlark.String(text)}, nil)
}
