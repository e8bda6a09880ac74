package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// FuzzParseLine checks that any line either parses or gives a *LineError, that a
// standard JSON object without repeated keys parses to what encoding/json gives,
// and that a parsed record written back by the Writer parses to the same values.
func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		`{"step":12,"loss":0.0123,"ms":231.5,"compiles":11}`,
		`{"epoch":3,"loss":0.2,"train_acc":0.95,"test_acc":0.94}`,
		`{"step":1,"loss":NaN,"g":-Infinity,"h":Infinity}`,
		`{"s":"a\"b\\c\u00e9","t":true,"n":null,"v":[1,[2]],"o":{"k":1}}`,
		`{"step":1,"step":2}`,
		`{"x":-0.0e+10}`,
		`{}`, ` { } `, `{"a":1,}`, `{"a":01}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		rec, err := parseLine(line)
		if err != nil {
			if _, ok := err.(*LineError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
		}
		var std map[string]any
		if json.Unmarshal(line, &std) == nil && std != nil && !bytes.ContainsAny(line, "\n") {
			if err != nil {
				// Only repeated keys, which encoding/json accepts, may be refused.
				if le := err.(*LineError); !bytes.Contains([]byte(le.Msg), []byte("appears twice")) {
					t.Fatalf("valid JSON %q refused: %v", line, err)
				}
				return
			}
			if !reflect.DeepEqual(rec.Values, std) {
				t.Fatalf("%q: got %#v, encoding/json gives %#v", line, rec.Values, std)
			}
		}
		if err != nil {
			return
		}
		again, err := appendRecord(nil, rec.Values)
		if err != nil {
			return // nested NaN cannot be written; that is reported, not lost
		}
		rec2, err := parseLine(again)
		if err != nil {
			t.Fatalf("%q written as %q which does not parse: %v", line, again, err)
		}
		if !sameValues(strictJSON(rec.Values), rec2.Values) {
			t.Fatalf("%q written as %q reads back as %#v", line, again, rec2.Values)
		}
	})
}

// sameValues is reflect.DeepEqual with NaN equal to NaN at the top level.
// strictJSON is what the writer makes of values: non-finite numbers null, their keys under NonFiniteKey.
func strictJSON(v map[string]any) map[string]any {
	bad := nonFinite(v)
	if len(bad) == 0 {
		return v
	}
	out := map[string]any{NonFiniteKey: []any{}}
	for k, x := range v {
		out[k] = x
	}
	for _, k := range bad {
		out[k] = nil
		out[NonFiniteKey] = append(out[NonFiniteKey].([]any), k)
	}
	return out
}

func sameValues(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok {
			return false
		}
		fa, aok := va.(float64)
		fb, bok := vb.(float64)
		if aok && bok && math.IsNaN(fa) && math.IsNaN(fb) {
			continue
		}
		if !reflect.DeepEqual(va, vb) {
			return false
		}
	}
	return true
}
