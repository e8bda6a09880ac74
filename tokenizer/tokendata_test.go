package tokenizer

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTokens writes ids as a token file at path.
func writeTokens(t *testing.T, path string, ids []int, vocab int) {
	t.Helper()
	if err := SaveTokens(path, ids, vocab); err != nil {
		t.Fatal(err)
	}
}

// A folder of shards reads as the shards' ids one after another, in name order, for any range, also
// across shard boundaries; a single file likewise.
func TestTokenDataReads(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	var all []int
	for _, c := range []struct {
		name string
		n    int
	}{{"data01.bin", 3000}, {"data00.bin", 5}, {"data02.bin", 1}, {"data03.bin", 2500}} {
		ids := make([]int, c.n)
		for i := range ids {
			ids[i] = rng.IntN(300)
		}
		writeTokens(t, filepath.Join(dir, c.name), ids, 300)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("not a shard"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"data00.bin", "data01.bin", "data02.bin", "data03.bin"} {
		ids, err := LoadTokens(filepath.Join(dir, name), 300)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
	}
	d, err := OpenTokens(dir, 300)
	if err != nil {
		t.Fatal(err)
	}

	if d.Len() != int64(len(all)) || len(d.Paths()) != 4 || !strings.HasSuffix(d.Paths()[0], "data00.bin") {
		t.Fatalf("Len %d (want %d), paths %v", d.Len(), len(all), d.Paths())
	}
	for _, r := range [][2]int{{0, len(all)}, {0, 5}, {4, 7}, {5, 3005}, {3004, 3007}, {3005, 3006}, {3000, 5000}, {len(all) - 1, len(all)}, {7, 7}} {
		got := make([]float32, r[1]-r[0])
		if err := d.ReadFloat32(int64(r[0]), got); err != nil {
			t.Fatal(err)
		}
		for i, v := range got {
			if int(v) != all[r[0]+i] {
				t.Fatalf("range %v: id %d is %v, want %d", r, r[0]+i, v, all[r[0]+i])
			}
		}
	}
	if err := d.ReadFloat32(int64(len(all)-2), make([]float32, 3)); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a range past the end: %v", err)
	}
	one, err := OpenTokens(filepath.Join(dir, "data01.bin"), 300)
	if err != nil {
		t.Fatal(err)
	}

	got := make([]float32, 3000)
	if err := one.ReadFloat32(0, got); err != nil || int(got[2999]) != all[5+2999] {
		t.Errorf("one file: %v, last id %v want %d", err, got[2999], all[5+2999])
	}
}

// Bad token data is an error naming the file and, where there is one, the offset and the fix.
func TestTokenDataBad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.bin")
	writeTokens(t, good, []int{1, 2, 3}, 10)
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(dir, "odd.bin")
	if err := os.WriteFile(odd, []byte{1, 0, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.bin")
	if err := os.WriteFile(text, []byte("Some text given as tokens, of even length."), 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.bin")
	if err := os.WriteFile(zero, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	shards := t.TempDir()
	writeTokens(t, filepath.Join(shards, "data00.bin"), []int{1, 2}, 10)
	writeTokens(t, filepath.Join(shards, "data01.bin"), []int{3, 9, 4}, 10)
	for _, c := range []struct {
		path  string
		vocab int
		want  string
	}{
		{good, 3, "good.bin: token 2 (offset 4): id 3 outside the vocabulary of 3 pieces"},
		{shards, 9, "data01.bin: token 1 (offset 2): id 9 outside the vocabulary of 9 pieces"},
		{empty, 10, "holds no .bin token file"},
		{odd, 10, "odd.bin: offset 2: odd length 3"},
		{text, 300, "text.bin reads as text"},
		{zero, 10, "zero.bin holds no tokens"},
		{filepath.Join(dir, "missing.bin"), 10, "missing.bin"},
		{good, 0, "does not fit a uint16 token file"},
	} {
		_, err := OpenTokens(c.path, c.vocab)
		if err == nil {
			t.Errorf("%s: opened", c.path)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	// A file changed after it was opened: its ids are checked as they are read.
	d, err := OpenTokens(good, 10)
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(good, []byte{1, 0, 200, 0, 3, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.ReadFloat32(0, make([]float32, 3)); err == nil || !strings.Contains(err.Error(), "offset 2: id 200 outside") {
		t.Errorf("a changed file: %v", err)
	}
}

func TestIsTokenData(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]bool{dir: true, "a.bin": true, "a.txt": false, filepath.Join(dir, "nope"): false} {
		if IsTokenData(path) != want {
			t.Errorf("IsTokenData(%s) = %v", path, !want)
		}
	}
}
