package builtins

import (
	"fmt"
	"math"
	"os"

	"github.com/anestar/anestar/internal/memlimit"
	"github.com/anestar/anestar/tokenizer"
	"go.starlark.net/starlark"
)

func (s *session) tokenizerModule() *moduleDef {
	return &moduleDef{
		name: "tokenizer",
		doc: "Text in: llama2.c `tokenizer.bin` vocabularies, BPE encoding and decoding as llama2.c's run.c does them " +
			"(and SentencePiece, for the BPE models llama2.c exports), a BPE vocabulary trainer, and uint16 token files " +
			"(llama2.c's and nanoGPT's `.bin`). Ids in tensors are float32, exact below 2^24.",
		fns: []fnDef{
			{sig: "read(path)", doc: "Reads a tokenizer.bin file to its end (`load` is a Starlark keyword). A truncated or corrupt file is an error naming the offset and the piece's id.", fn: tokenizerLoad},
			{sig: "train(text, n, whitespace_pieces = False)", doc: "Learns a BPE vocabulary of n pieces from the string text (n counts the 259 reserved pieces: `<unk>`, `<s>`, `</s>` " +
				"and 256 bytes, so it must exceed 259). Words carry their leading space; every character of the text is a piece as far as n allows; " +
				"deterministic; about 0.1 s for 567 KB of text. With whitespace_pieces a run of spaces leads the word after it and merges into pieces of spaces " +
				"(SentencePiece's allow_whitespace_only_pieces: indentation in a few tokens); off, each space of a run is a piece of its own.", fn: tokenizerTrain},
			{sig: "train_file(path, n, whitespace_pieces = False)", doc: "As train, on the text file at path, read a piece at a time (cut where a run " +
				"of spaces starts, as encode_file cuts it): the same vocabulary, in memory that grows with the text's distinct words, not with the text.", fn: tokenizerTrainFile},
			{sig: "read_text(path, limit = 0)", doc: "Returns the contents of a text file as a string, for train or encode; with limit, its first limit bytes only.", fn: tokenizerReadText},
			{sig: "looks_like_text(s)", doc: "Whether the string s (a file's first bytes, say) reads as text: valid UTF-8 without control bytes but tab, newline and " +
				"carriage return. A uint16 token file rarely does.", fn: tokenizerLooksLikeText},
			{sig: "read_tokens(path, vocab = 65536)", doc: "Reads a token file (little-endian uint16 ids, no header) into a 1-D tensor of ids " +
				"without a vocabulary: an id of vocab or more is an error naming its position.", fn: tokenizerReadTokens},
			{sig: "open_tokens(path, vocab = 65536)", doc: "Token data read where it lies (a tokens value): the token file at path, or the " +
				"folder of .bin token files at path (llama2.c's shards: data00.bin, data01.bin, ...) read in name order as one sequence. " +
				"Every file is checked first, a MiB at a time (even length, ids below vocab; a text given as tokens is named as such); " +
				"afterwards only the ranges asked for are read, so memory does not grow with the data.", fn: tokenizerOpenTokens},
			{sig: "is_token_data(path)", doc: "Whether path names token data rather than text: a folder (of token files) or a name ending in .bin.", fn: tokenizerIsTokenData},
		},
	}
}

// tokenizerValue is a vocabulary as a Starlark value.
type tokenizerValue struct {
	t *tokenizer.Tokenizer
}

var tokenizerType = &typeDef{
	name: "tokenizer",
	doc: "A BPE vocabulary made by tokenizer.read or tokenizer.train. Id 0 is `<unk>`, 1 `<s>` (BOS), 2 `</s>` (EOS), " +
		"3..258 the bytes `<0x00>..<0xFF>` when the vocabulary has byte fallback.",
	members: []fnDef{
		{sig: "vocab_size", doc: "The number of pieces."},
		{sig: "fingerprint", doc: "16 hex digits naming the vocabulary (a hash of every piece and score): equal vocabularies, equal fingerprints."},
		{sig: "piece(id)", doc: "The text of piece id, a space where SentencePiece writes ▁.", fn: tokPiece},
		{sig: "encode(text, bos = False, eos = False, tensor = False)", doc: "The ids of text, a list of ints (with tensor = True a 1-D tensor of ids, " +
			"a tenth of the memory): `<s>` first when bos, `</s>` last when eos. Invalid UTF-8 takes the byte fallback.", fn: tokEncode},
		{sig: "decode(ids)", doc: "The text of ids (a list of ints or a 1-D tensor): decode(encode(text)) == text. `<s>` and `</s>` write nothing.", fn: tokDecode},
		{sig: "save(path)", doc: "Writes the vocabulary as a tokenizer.bin file, usable by llama2.c.", fn: tokSave},
		{sig: "encode_file(path, bos = False, eos = False)", doc: "Encodes a text file as one string into a 1-D tensor of ids, read in pieces cut before spaces " +
			"(the same ids, in memory that does not grow with the text) unless a piece of the vocabulary holds a space inside.", fn: tokEncodeFile},
		{sig: "read_tokens(path)", doc: "Reads a token file (little-endian uint16 ids, no header) into a 1-D tensor of ids. " +
			"An id beyond the vocabulary is an error naming its position.", fn: tokReadTokens},
		{sig: "byte_lengths()", doc: "A tensor [vocab_size] of the bytes of text each id stands for, for bits per byte: its piece's " +
			"UTF-8 length (a leading space included), 1 for a byte piece, 0 for `<unk>`, `<s>` and `</s>`.", fn: tokByteLengths},
	},
}

var tokenizerMethods = newMethodSet(tokenizerType)

var _ starlark.HasAttrs = (*tokenizerValue)(nil)

func (v *tokenizerValue) String() string        { return fmt.Sprintf("tokenizer(%d pieces)", v.t.VocabSize()) }
func (v *tokenizerValue) Type() string          { return "tokenizer" }
func (v *tokenizerValue) Freeze()               {}
func (v *tokenizerValue) Truth() starlark.Bool  { return true }
func (v *tokenizerValue) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: tokenizer") }
func (v *tokenizerValue) AttrNames() []string   { return tokenizerMethods.names }
func (v *tokenizerValue) Attr(name string) (starlark.Value, error) {
	switch name {
	case "vocab_size":
		return starlark.MakeInt(v.t.VocabSize()), nil
	case "fingerprint":
		return starlark.String(v.t.Fingerprint()), nil
	}
	return tokenizerMethods.bind(v, name), nil
}

func tokenizerLoad(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	t, err := tokenizer.Load(path)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return &tokenizerValue{t}, nil
}

func tokenizerTrain(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	var n int
	var spaces bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "n", &n, "whitespace_pieces?", &spaces); err != nil {
		return nil, err
	}
	t, err := tokenizer.TrainWith(text, n, tokenizer.TrainOptions{WhitespacePieces: spaces}, nil)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return &tokenizerValue{t}, nil
}

func tokenizerTrainFile(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var n int
	var spaces bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "n", &n, "whitespace_pieces?", &spaces); err != nil {
		return nil, err
	}
	f, _, err := tokenizer.OpenRegular(path)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	defer f.Close()
	t, err := tokenizer.TrainReader(f, n, tokenizer.TrainOptions{WhitespacePieces: spaces}, nil, nil)
	if err != nil {
		return nil, nameErrf(b.Name(), "%s: %v", path, trimPrefix(err, "tokenizer: "))
	}
	return &tokenizerValue{t}, nil
}

func tokenizerLooksLikeText(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "s", &text); err != nil {
		return nil, err
	}
	return starlark.Bool(tokenizer.LooksLikeText([]byte(text))), nil
}

func tokenizerReadText(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	limit := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "limit?", &limit); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, nameErrf(b.Name(), "limit = %d: want the bytes to read, or 0 for all", limit)
	}
	if limit > 0 { // the file's first bytes only
		head, err := tokenizer.ReadHead(path, limit)
		if err != nil {
			return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
		}
		return starlark.String(head), nil
	}
	data, err := tokenizer.ReadFile(path)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return starlark.String(data), nil
}

func tokPiece(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var id int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "id", &id); err != nil {
		return nil, err
	}
	if id < 0 || id >= t.VocabSize() {
		return nil, nameErrf(b.Name(), "id %d outside the vocabulary of %d pieces", id, t.VocabSize())
	}
	return starlark.String(t.Piece(id)), nil
}

func tokEncode(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var text string
	var bos, eos, asTensor bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "bos?", &bos, "eos?", &eos, "tensor?", &asTensor); err != nil {
		return nil, err
	}
	if err := memlimit.Check(encodeBytes(t, len(text)), fmt.Sprintf("encoding a text of %d bytes", len(text))); err != nil {
		return nil, nameErrf(b.Name(), "%v: encode a file with t.encode_file(path) (a tensor) or `anestar tokenize` (a token file), which stream it", err)
	}
	ids := t.Encode(text, bos, eos)
	if asTensor {
		if len(ids) == 0 {
			return nil, nameErrf(b.Name(), "the text has no tokens: a tensor cannot be empty")
		}
		return idTensor(b.Name(), "the text", t.VocabSize(), ids)
	}
	if err := memlimit.Check(listBytesPerID*uint64(len(ids)), fmt.Sprintf("a list of %d ids", len(ids))); err != nil {
		return nil, nameErrf(b.Name(), "%v: ask for a tensor (tensor = True: 4 bytes an id)", err)
	}
	elems := make([]starlark.Value, len(ids))
	for i, id := range ids {
		elems[i] = starlark.MakeInt(id)
	}
	return starlark.NewList(elems), nil
}

// encodeBytes bounds the memory Encode takes for n bytes of text: the ids returned (int) and, where
// merges may cross spaces, the ids before merging and the merger's links and heap.
func encodeBytes(t *tokenizer.Tokenizer, n int) uint64 {
	if t.CanStream() {
		return 16 * uint64(n)
	}
	return 40 * uint64(n)
}

// listBytesPerID is about what a Starlark list takes per int: the interface value and the int.
const listBytesPerID = 48

func tokDecode(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "ids", &v); err != nil {
		return nil, err
	}
	var ids []int
	if x, ok := v.(*Tensor); ok {
		var err error
		if ids, err = tensorIDs(b.Name(), x); err != nil {
			return nil, err
		}
	} else {
		var err error
		if ids, err = intList(b.Name(), "ids", v); err != nil {
			return nil, err
		}
	}
	text, err := t.Decode(ids)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return starlark.String(text), nil
}

// tensorIDs reads a 1-D tensor of ids: whole numbers from 0 to 2^24.
func tensorIDs(fn string, x *Tensor) ([]int, error) {
	if err := x.readable(fn); err != nil {
		return nil, err
	}
	if len(x.shape) != 1 {
		return nil, nameErrf(fn, "ids: got a tensor of shape %s, want 1-D", shapeString(x.shape))
	}
	ids := make([]int, len(x.data))
	for i, f := range x.data {
		if f != float32(math.Floor(float64(f))) || f < 0 || f > 1<<24 {
			return nil, nameErrf(fn, "ids[%d] = %v is not an id (a whole number from 0 to 2^24)", i, f)
		}
		ids[i] = int(f)
	}
	return ids, nil
}

func tokSave(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	if err := refuseScriptOf(th, path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := t.Save(path); err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	return starlark.None, nil
}

func tokEncodeFile(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var path string
	var bos, eos bool
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "bos?", &bos, "eos?", &eos); err != nil {
		return nil, err
	}
	if t.CanStream() && t.VocabSize() <= 1<<24 {
		return encodeFileStream(b.Name(), t, path, bos, eos)
	}
	data, err := tokenizer.ReadFile(path)
	if err != nil {
		return nil, nameErr(b.Name(), trimPrefix(err, "tokenizer: "))
	}
	if err := memlimit.Check(encodeBytes(t, len(data)), fmt.Sprintf("encoding %s (%d bytes) whole", path, len(data))); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return idTensor(b.Name(), path, t.VocabSize(), t.Encode(string(data), bos, eos))
}

// encodeFileStream encodes the text file at path with tokenizer.EncodeStream into float32 ids: memory
// is the ids alone (grown by doubling, each growth checked against what can be allocated).
func encodeFileStream(fn string, t *tokenizer.Tokenizer, path string, bos, eos bool) (starlark.Value, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nameErrf(fn, "%v", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, nameErrf(fn, "%s is not a regular file", path)
	}
	var data []float32
	add := func(ids []int) error {
		if need := len(data) + len(ids); need > cap(data) {
			grown := max(2*cap(data), need, 1<<16)
			if err := memlimit.Check(4*uint64(grown), fmt.Sprintf("the ids of %s (%d so far)", path, len(data))); err != nil {
				return err
			}
			data = append(make([]float32, 0, grown), data...)
		}
		for _, id := range ids {
			data = append(data, float32(id))
		}
		return nil
	}
	if err := t.EncodeStream(f, bos, add, nil); err != nil {
		return nil, nameErr(fn, trimPrefix(err, "tokenizer: "))
	}
	if eos {
		if err := add([]int{tokenizer.EOS}); err != nil {
			return nil, nameErr(fn, err)
		}
	}
	if len(data) == 0 {
		return nil, nameErrf(fn, "%s holds no tokens", path)
	}
	x, err := TensorOf(data, len(data))
	if err != nil {
		return nil, nameErr(fn, err)
	}
	return x, nil
}

func tokReadTokens(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	return tokenTensor(b.Name(), path, t.VocabSize())
}

func tokenizerReadTokens(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	vocab := 1 << 16
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "vocab?", &vocab); err != nil {
		return nil, err
	}
	if vocab < 1 || vocab > 1<<16 {
		return nil, fmt.Errorf("%s: vocab = %d: uint16 ids need a vocabulary of 1 to 65536", b.Name(), vocab)
	}
	return tokenTensor(b.Name(), path, vocab)
}

// idTensor returns ids as a 1-D float32 tensor.
// tokenTensor reads the token file at path into a 1-D tensor of ids, memory checked before it is
// allocated (tokenizer.LoadTokensFloat32: the tensor is all it takes).
func tokenTensor(fn, path string, vocab int) (starlark.Value, error) {
	var x *Tensor
	_, err := tokenizer.LoadTokensFloat32(path, vocab, func(n int) ([]float32, error) {
		if n == 0 {
			return nil, fmt.Errorf("%s holds no tokens", path)
		}
		var err error
		x, err = NewTensor(n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return x.data, nil
	})
	if err != nil {
		return nil, nameErr(fn, trimPrefix(err, "tokenizer: "))
	}
	return x, nil
}

func idTensor(fn, path string, vocab int, ids []int) (starlark.Value, error) {
	if vocab > 1<<24 {
		return nil, nameErrf(fn, "a vocabulary of %d pieces has ids that float32 cannot hold exactly (at most 2^24)", vocab)
	}
	if len(ids) == 0 {
		return nil, nameErrf(fn, "%s holds no tokens", path)
	}
	data := make([]float32, len(ids))
	for i, id := range ids {
		data[i] = float32(id)
	}
	x, err := TensorOf(data, len(data))
	if err != nil {
		return nil, nameErr(fn, err)
	}
	return x, nil
}

func tokByteLengths(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	t := b.Receiver().(*tokenizerValue).t
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	lens := t.ByteLengths()
	data := make([]float32, len(lens))
	for i, n := range lens {
		data[i] = float32(n)
	}
	return TensorOf(data, len(data))
}
