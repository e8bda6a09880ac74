package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
)

// Help for a command that does not exist is a usage error, at the top level and under mil.
func TestHelpUnknownCommand(t *testing.T) {
	for _, args := range [][]string{{"help", "nosuch"}, {"mil", "help", "nosuch"}} {
		var out, errb bytes.Buffer
		if code := dispatch(args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), `unknown`) {
			t.Errorf("%v: exit %d, stderr %q; want %d and an unknown-command message", args, code, errb.String(), exitUsage)
		}
	}
}

// --help anywhere in `mil run` shows its help (which names every flag) and never runs the file.
func TestMilRunHelpAnywhere(t *testing.T) {
	file := filepath.Join(t.TempDir(), "bad.mil")
	if err := os.WriteFile(file, []byte("not mil"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"mil", "run", "--help"}, {"mil", "run", file, "--help"}, {"mil", "run", "-h", file}, {"help", "mil"}} {
		var out, errb bytes.Buffer
		code := dispatch(args, &out, &errb)
		if code != exitOK || errb.Len() > 0 {
			t.Errorf("%v: exit %d, stderr %q; want help and exit 0", args, code, errb.String())
			continue
		}
		if args[0] == "mil" {
			for _, flag := range []string{"--in", "--out", "--evals", "--weights"} {
				if !strings.Contains(out.String(), flag) {
					t.Errorf("%v: help does not mention %s:\n%s", args, flag, out.String())
				}
			}
		}
	}
}

// The variables anestar reads are listed in --help and checked before any command runs.
func TestEnvironmentChecked(t *testing.T) {
	var out bytes.Buffer
	dispatch([]string{"--help"}, &out, &out)
	for _, v := range []string{ane.EnvBackend, cpu.BLASEnv} {
		if !strings.Contains(out.String(), v) {
			t.Errorf("--help does not list %s", v)
		}
	}
	for _, c := range []struct{ name, value, want string }{
		{ane.EnvBackend, "foo", "unknown backend (want auto, "},
		{cpu.BLASEnv, "mkl", `unknown BLAS "mkl"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.name, c.value)
			var out, errb bytes.Buffer
			code := dispatch([]string{"backends"}, &out, &errb)
			if code != exitUsage || !strings.Contains(errb.String(), c.want) || strings.Contains(errb.String(), "[") {
				t.Errorf("%s=%s anestar backends: exit %d, stderr %q; want %d and %q", c.name, c.value, code, errb.String(), exitUsage, c.want)
			}
		})
	}
}

// A positional KEY=VALUE that names a script parameter is a forgotten --set: an error that says so.
func TestPositionalSettingRefused(t *testing.T) {
	script := filepath.Join(t.TempDir(), "p.star")
	if err := os.WriteFile(script, []byte("P = params(dim = 4)\nprint(P.dim)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check", "run"} {
		var out, errb bytes.Buffer
		code := dispatch([]string{cmd, script, "dim=100"}, &out, &errb)
		if code != exitUsage || !strings.Contains(errb.String(), "did you mean --set dim=100?") {
			t.Errorf("anestar %s p.star dim=100: exit %d, stderr %q; want a did-you-mean --set error", cmd, code, errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"run", script, "other=1"}, &out, &errb); code != exitOK {
		t.Errorf("a positional argument that names no parameter: exit %d, stderr %q; want it passed to the script", code, errb.String())
	}
}
