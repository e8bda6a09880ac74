package builtins

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/anestar/anestar/tokenizer"
)

// tokenDataValue is a range [off, off+n) of token data read where it lies (tokenizer.TokenData).
type tokenDataValue struct {
	d      *tokenizer.TokenData
	off, n int64
}

var tokenDataType = &typeDef{
	name: "tokens",
	doc: "Token ids read where they lie, from tokenizer.open_tokens: a token file, or a folder of them read as one " +
		"sequence, or a range of either (part). Memory does not grow with the data: rows reads a range when it is asked for.",
	members: []fnDef{
		{sig: "size", doc: "The number of ids."},
		{sig: "paths", doc: "The token files, in the order their ids follow one another."},
		{sig: "rows(start, end)", doc: "Ids [start, end) as a new 1-D tensor (float32, exact), read from the files; across " +
			"files where the range spans several.", fn: tokenDataRows},
		{sig: "part(start, end)", doc: "Ids [start, end) as tokens: a range, nothing read.", fn: tokenDataPart},
		{sig: "max()", doc: "The largest id (known for whole files from their check; read for a part of one).", fn: tokenDataMax},
		{sig: "list()", doc: "Every id, a list of ints (the whole range in memory: for small data).", fn: tokenDataList},
	},
}

var tokenDataMethods = newMethodSet(tokenDataType)

var _ starlark.HasAttrs = (*tokenDataValue)(nil)

func (v *tokenDataValue) String() string {
	return fmt.Sprintf("tokens(%d ids of %d files)", v.n, len(v.d.Paths()))
}
func (v *tokenDataValue) Type() string          { return "tokens" }
func (v *tokenDataValue) Freeze()               {}
func (v *tokenDataValue) Truth() starlark.Bool  { return v.n > 0 }
func (v *tokenDataValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tokens") }
func (v *tokenDataValue) AttrNames() []string   { return tokenDataMethods.names }
func (v *tokenDataValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "size":
		return starlark.MakeInt64(v.n), nil
	case "paths":
		var l []starlark.Value
		for _, p := range v.d.Paths() {
			l = append(l, starlark.String(p))
		}
		return starlark.NewList(l), nil
	}
	return tokenDataMethods.bind(v, name), nil
}

// tokenizerOpenTokens is tokenizer.open_tokens(path, vocab = 65536).
func tokenizerOpenTokens(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	vocab := tokenizer.MaxTokenFileVocab
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "vocab?", &vocab); err != nil {
		return nil, err
	}
	d, err := tokenizer.OpenTokens(path, vocab)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return &tokenDataValue{d: d, n: d.Len()}, nil
}

// tokenizerIsTokenData is tokenizer.is_token_data(path).
func tokenizerIsTokenData(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	return starlark.Bool(tokenizer.IsTokenData(path)), nil
}

// tokenRange unpacks start and end, a range within v.
func tokenRange(b *starlark.Builtin, v *tokenDataValue, args starlark.Tuple, kwargs []starlark.Tuple) (start, end int64, err error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "start", &start, "end", &end); err != nil {
		return 0, 0, err
	}
	if start < 0 || end < start || end > v.n {
		return 0, 0, nameErrf(b.Name(), "[%d, %d) is not a range of the %d ids of %s", start, end, v.n, v)
	}
	return start, end, nil
}

func tokenDataRows(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v := b.Receiver().(*tokenDataValue)
	start, end, err := tokenRange(b, v, args, kwargs)
	if err != nil {
		return nil, err
	}
	if end == start {
		return nil, nameErrf(b.Name(), "an empty range [%d, %d): a tensor holds at least one id", start, end)
	}
	t, err := NewTensor(int(end - start))
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := v.d.ReadFloat32(v.off+start, t.data); err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return t, nil
}

func tokenDataPart(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v := b.Receiver().(*tokenDataValue)
	start, end, err := tokenRange(b, v, args, kwargs)
	if err != nil {
		return nil, err
	}
	return &tokenDataValue{d: v.d, off: v.off + start, n: end - start}, nil
}

func tokenDataList(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v := b.Receiver().(*tokenDataValue)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	t, err := NewTensor(int(max(v.n, 1)))
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := v.d.ReadFloat32(v.off, t.data[:v.n]); err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	l := make([]starlark.Value, v.n)
	for i, id := range t.data[:v.n] {
		l[i] = starlark.MakeInt(int(id))
	}
	return starlark.NewList(l), nil
}

func tokenDataMax(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	v := b.Receiver().(*tokenDataValue)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	top, err := v.d.Max(v.off, v.n)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return starlark.MakeInt(top), nil
}
