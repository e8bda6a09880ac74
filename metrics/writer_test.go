package metrics

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriterLineFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	records := []map[string]any{
		{"loss": 0.0123, "step": 12, "ms": 231.5, "compiles": int64(11)},
		{"train_acc": float32(0.95), "epoch": uint8(3), "test_acc": 0.94, "loss": 0.2},
		{"zeta": 1, "epoch": 2, "step": 40, "alpha": -1e-07},
		{"step": 41, "loss": math.NaN(), "gnorm": math.Inf(1), "lr": math.Inf(-1)},
		{"step": 42, "note": `say "hi" <&> é`, "ok": true, "bad": false, "none": nil, "v": []int{1, 2}},
		{},
	}
	for _, r := range records {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"step":12,"compiles":11,"loss":0.0123,"ms":231.5}
{"epoch":3,"loss":0.2,"test_acc":0.94,"train_acc":0.95}
{"step":40,"epoch":2,"alpha":-1e-07,"zeta":1}
{"step":41,"gnorm":null,"loss":null,"lr":null,"nonfinite":["gnorm","loss","lr"]}
{"step":42,"bad":false,"none":null,"note":"say \"hi\" <&> é","ok":true,"v":[1,2]}
{}
`
	if got := readFile(t, path); got != want {
		t.Errorf("file:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriterReaderRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	// Values chosen to need all 17 digits, tiny and huge exponents, negative zero.
	vals := []float64{0.1, 1.0 / 3, math.Pi * 1e300, 5e-324, -0.0, 123456789012345678, math.MaxFloat64}
	for i, v := range vals {
		if err := w.Write(map[string]any{"step": i, "x": v, "f32": float32(v), "name": "r"}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) != len(vals) || s.Superseded != 0 || s.Truncated != 0 {
		t.Fatalf("got %d records, superseded %d, truncated %d", len(s.Records), s.Superseded, s.Truncated)
	}
	for i, r := range s.Records {
		if x, _ := r.Number("x"); math.Float64bits(x) != math.Float64bits(vals[i]) {
			t.Errorf("record %d: x = %v, want %v", i, x, vals[i])
		}
		want := []string{"step", "f32", "name", "x"}
		if f32 := float32(vals[i]); math.IsInf(float64(f32), 0) { // strict JSON: null, and the key listed
			want = []string{"step", "f32", "name", "nonfinite", "x"}
			if _, ok := r.Number("f32"); ok || r.Values["f32"] != nil || !reflect.DeepEqual(r.Values["nonfinite"], []any{"f32"}) {
				t.Errorf("record %d: f32 %v, nonfinite %v; want null and [f32]", i, r.Values["f32"], r.Values["nonfinite"])
			}
		} else if f, _ := r.Number("f32"); float32(f) != f32 {
			t.Errorf("record %d: f32 = %v, want %v", i, f, f32)
		}
		if r.Line != i+1 || r.Values["name"] != "r" {
			t.Errorf("record %d: line %d, name %v", i, r.Line, r.Values["name"])
		}
		if !reflect.DeepEqual(r.Keys, want) {
			t.Errorf("record %d: keys %v, want %v", i, r.Keys, want)
		}
	}
}

func TestWriterAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	for i, mode := range []bool{false, true, true} {
		w, err := Open(path, mode)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(map[string]any{"step": i}); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	if got, want := readFile(t, path), "{\"step\":0}\n{\"step\":1}\n{\"step\":2}\n"; got != want {
		t.Errorf("after appends: %q, want %q", got, want)
	}
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := readFile(t, path); got != "" {
		t.Errorf("open without append left %q", got)
	}
}

func TestWriterRepairsTail(t *testing.T) {
	long := `{"step":1,"note":"` + strings.Repeat("x", 10000) + `"}` + "\n"
	cases := []struct {
		name, before, after string
		dropped             int64
	}{
		{"cut record", "{\"step\":1}\n{\"step\":2,\"lo", "{\"step\":1}\n{\"step\":9}\n", 13},
		{"cut after long line", long + `{"st`, long + "{\"step\":9}\n", 4},
		{"only a cut record", `{"step":2,"loss":0.`, "{\"step\":9}\n", 19},
		{"whole record without newline", "{\"step\":1}\n{\"step\":2}", "{\"step\":1}\n{\"step\":2}\n{\"step\":9}\n", 0},
		{"spaces without newline", "{\"step\":1}\n  ", "{\"step\":1}\n  \n{\"step\":9}\n", 0},
		{"ends in newline", "{\"step\":1}\n", "{\"step\":1}\n{\"step\":9}\n", 0},
		{"empty", "", "{\"step\":9}\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.jsonl")
			if err := os.WriteFile(path, []byte(c.before), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := Open(path, true)
			if err != nil {
				t.Fatal(err)
			}
			if w.Dropped() != c.dropped {
				t.Errorf("Dropped() = %d, want %d", w.Dropped(), c.dropped)
			}
			if err := w.Write(map[string]any{"step": 9}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if got := readFile(t, path); got != c.after {
				t.Errorf("file %q, want %q", got, c.after)
			}
			if _, err := Read(path); err != nil {
				t.Errorf("Read after repair: %v", err)
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "no", "such", "dir.jsonl"), true); err == nil {
		t.Error("Open in a missing directory: no error")
	}
	path := filepath.Join(dir, "m.jsonl")
	w, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Write(map[string]any{"step": 1, "grads": []float64{1, math.NaN()}})
	if err == nil || !strings.Contains(err.Error(), `key "grads"`) || !strings.Contains(err.Error(), path) {
		t.Errorf("unencodable value: err = %v, want one naming the key and file", err)
	}
	if err := w.Write(map[string]any{"step": 1, "c": make(chan int)}); err == nil {
		t.Error("channel value: no error")
	}
	w.Close()
	if got := readFile(t, path); got != "" {
		t.Errorf("failed writes left %q in the file", got)
	}
	if err := w.Write(map[string]any{"step": 2}); err == nil || !strings.Contains(err.Error(), "after close") {
		t.Errorf("write after close: err = %v", err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func BenchmarkWrite(b *testing.B) {
	w, err := Open(filepath.Join(b.TempDir(), "m.jsonl"), false)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rec := map[string]any{"step": 0, "loss": 0.0123, "ms": 231.5, "compiles": 11}
	for i := 0; b.Loop(); i++ {
		rec["step"] = i
		if err := w.Write(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTwoWritersDoNotTear: a fresh writer and an appending one on one file, writing at once, leave
// every line whole (both open the file with O_APPEND, one write per line).
func TestTwoWritersDoNotTear(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.jsonl")
	a, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	done := make(chan error, 2)
	for _, w := range []*Writer{a, b} {
		go func() {
			for i := 0; i < n; i++ {
				if err := w.Write(map[string]any{"step": i, "note": strings.Repeat("x", 200)}); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	a.Close()
	b.Close()
	s, err := Read(path)
	if err != nil {
		t.Fatalf("torn lines: %v", err)
	}
	data, _ := os.ReadFile(path)
	if lines := strings.Count(string(data), "\n"); lines != 2*n {
		t.Errorf("%d lines, want %d (records: %d)", lines, 2*n, len(s.Records))
	}
}
