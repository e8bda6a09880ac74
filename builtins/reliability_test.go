package builtins

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMergeFlags(t *testing.T) {
	for _, tc := range []struct{ argv, flags, want []string }{
		{[]string{"run", "s.star", "--set", "a=5"}, []string{"--set", "b=3"}, []string{"run", "s.star", "--set", "a=5", "--set", "b=3"}},
		{[]string{"run", "s.star", "--set", "a=5"}, []string{"--set", "a=6"}, []string{"run", "s.star", "--set", "a=6"}},
		{[]string{"run", "s.star", "--set=a=5", "--resume"}, []string{"--resume", "--set=a=7"}, []string{"run", "s.star", "--resume", "--set", "a=7"}},
		{[]string{"run", "s.star"}, []string{"--resume"}, []string{"run", "s.star", "--resume"}},
	} {
		got, err := mergeFlags(tc.argv, tc.flags)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("mergeFlags(%q, %q) = %q, %v; want %q", tc.argv, tc.flags, got, err, tc.want)
		}
	}
	if _, err := mergeFlags(nil, []string{"--set"}); err == nil {
		t.Error("a trailing --set accepted")
	}
	if _, err := mergeFlags(nil, []string{"--set", "novalue"}); err == nil {
		t.Error("--set without = accepted")
	}
}

// TestExecKeepsSettings: a script that restarts itself until a setting holds ends after one restart.
func TestExecKeepsSettings(t *testing.T) {
	src := "P = params(a = 0, b = 0)\nif P.b != 3:\n    process.exec([\"--set\", \"b=3\"])\n"
	var got []string
	cfg := Config{Script: "x.star", Source: []byte(src), Params: map[string]string{"a": "5"},
		Argv: []string{"run", "x.star", "--set", "a=5"}, Exec: func(argv []string) error { got = argv; return nil }}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if want := []string{"run", "x.star", "--set", "a=5", "--set", "b=3"}; !slices.Equal(got, want) {
		t.Fatalf("exec with %q, want %q", got, want)
	}
}

// TestMetricsWriteErrorWarnsOnce writes metrics to /dev/full: every write fails, the run goes on,
// and one warning is printed.
func TestMetricsWriteErrorWarnsOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	src := "log = process.metrics(\"/dev/full\")\nfor i in range(5):\n    log.write(step = i, loss = 1.0)\ndone = True\n"
	var warn bytes.Buffer
	res, err := Run(context.Background(), Config{Script: "m.star", Source: []byte(src), Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if res.Globals["done"] == nil {
		t.Fatal("the script did not finish")
	}
	if n := strings.Count(warn.String(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warn.String())
	}
}

// TestResumedMetricsDropLinesPastCheckpoint: after ckpt.load_state restores step 3, a metrics file
// opened to append loses the lines of steps 3 and later that a killed run wrote.
func TestResumedMetricsDropLinesPastCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.jsonl")
	var lines string
	for i := 0; i < 6; i++ {
		lines += `{"step":` + string(rune('0'+i)) + `,"loss":1}` + "\n"
	}
	os.WriteFile(m, []byte(lines), 0o644)
	c := filepath.Join(dir, "c.safetensors")
	save := "W = {\"w\": tensor.ones(2)}\nckpt.save_state(" + quoteStar(c) + ", W, step = 3)\n"
	if _, err := Run(context.Background(), Config{Script: "s.star", Source: []byte(save)}); err != nil {
		t.Fatal(err)
	}
	resume := "W = {\"w\": tensor.ones(2)}\nst = ckpt.load_state(" + quoteStar(c) + ", W)\nlog = process.metrics(" + quoteStar(m) + ")\nlog.write(step = st.step, loss = 0.5)\n"
	if _, err := Run(context.Background(), Config{Script: "r.star", Source: []byte(resume), Resume: true}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(m)
	want := `{"step":0,"loss":1}` + "\n" + `{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":1}` + "\n" + `{"step":3,"loss":0.5}` + "\n"
	if string(data) != want {
		t.Errorf("metrics file:\n%s\nwant:\n%s", data, want)
	}
}

func quoteStar(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestCheckFailsOnMissingOutputFolder: the dry run (`anestar check`) of a script that declares a
// checkpoint in a missing folder fails at once.
func TestCheckFailsOnMissingOutputFolder(t *testing.T) {
	src := "process.outputs(checkpoint = \"/no/such/folder/c.safetensors\")\nprint(\"trained\")\n"
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{Script: "c.star", Source: []byte(src), DryRun: true, Stdout: &out})
	if err == nil || !strings.Contains(err.Error(), "the folder /no/such/folder does not exist") || out.Len() > 0 {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}
