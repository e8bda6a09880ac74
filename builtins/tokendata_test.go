package builtins

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// tokenizer.train_file learns train's vocabulary of the file's text; open_tokens reads a token file's
// ids in ranges, parts and whole, as read_tokens reads them, and refuses a range outside the data.
func TestTrainFileAndOpenTokens(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "t.txt")
	body := strings.Repeat("the light of the sun,  and   the lights  of the  moon\n", 200)
	if err := os.WriteFile(text, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	toks := filepath.Join(dir, "t.bin")
	g, err := execGlobals(t, `
path, toks = `+strconv.Quote(text)+`, `+strconv.Quote(toks)+`
same = [tokenizer.train_file(path, 290, whitespace_pieces = ws).fingerprint == tokenizer.train(tokenizer.read_text(path), 290, whitespace_pieces = ws).fingerprint for ws in [False, True]]
tok = tokenizer.train_file(path, 290)
ids = tok.encode(tokenizer.read_text(path))
`)
	if err != nil {
		t.Fatal(err)
	}
	if s := g["same"].String(); s != "[True, True]" {
		t.Errorf("train_file against train: %s", s)
	}
	ids := g["ids"].(*starlark.List)
	var b []byte
	for i := range ids.Len() {
		n, _ := starlark.AsInt32(ids.Index(i))
		b = append(b, byte(n), byte(n>>8))
	}
	if err := os.WriteFile(toks, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = execGlobals(t, `
d = tokenizer.open_tokens(`+strconv.Quote(toks)+`, vocab = 290)
whole = tokenizer.read_tokens(`+strconv.Quote(toks)+`)
n = d.size
rows_ok = d.rows(3, 40).list() == whole.rows(3, 40).list()
p = d.part(10, n - 5)
part_ok = p.size == n - 15 and p.rows(0, 7).list() == whole.rows(10, 17).list() and p.list() == whole.rows(10, n - 5).list()
max_ok = d.max() == int(whole.max()) and p.max() == int(whole.rows(10, n - 5).max())
is_tok = [tokenizer.is_token_data(x) for x in [`+strconv.Quote(toks)+`, `+strconv.Quote(text)+`, `+strconv.Quote(dir)+`]]
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rows_ok", "part_ok", "max_ok"} {
		if g[k] != starlark.True {
			t.Errorf("%s: %v", k, g[k])
		}
	}
	if s := g["is_tok"].String(); s != "[True, False, True]" {
		t.Errorf("is_token_data: %s", s)
	}
	for _, c := range []struct{ src, want string }{
		{"tokenizer.open_tokens(P).rows(5, 3)", "is not a range of the"},
		{"tokenizer.open_tokens(P).part(0, 1000000000)", "is not a range of the"},
		{"tokenizer.open_tokens(P).rows(4, 4)", "an empty range"},
		{"tokenizer.open_tokens(P, vocab = 10)", "outside the vocabulary of 10 pieces"},
		{"tokenizer.train_file(P + \".none\", 300)", "t.bin.none"},
	} {
		_, err := execGlobals(t, "P = "+strconv.Quote(toks)+"\n"+c.src+"\n")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
	}
}
