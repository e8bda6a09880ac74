package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/cpu"
)

// envVar is one environment variable anestar reads, for `anestar --help`.
type envVar struct {
	name string
	doc  string
}

// environment lists every variable anestar reads (the BLAS library's own are read by the library).
var environment = []envVar{
	{ane.EnvBackend, "the backend `auto` picks: ane or emulator (default: the most preferred available)"},
	{cpu.BLASEnv, "the host BLAS: accelerate, openblas, gonum or reference (default auto: the first that loads)"},
	{cpu.AMXEnv, "f16: only the emulator's fp16 matmuls on AMX tiles, its fp32 ones (--fp32) on the BLAS; off: both on the BLAS (default auto: AMX where the CPU and OS allow)"},
	{"OPENBLAS_CORETYPE", "OpenBLAS's kernel family (e.g. SkylakeX, Haswell; default: chosen from the CPU's features)"},
	{"OPENBLAS_NUM_THREADS", "OpenBLAS's threads (default here 1: anestar splits large products itself)"},
	{cpu.CacheDirEnv, "where measurements such as the sgemm peak are cached (default: the user's cache directory/anestar)"},
}

// envUsage writes the environment section of the usage text.
func envUsage(w io.Writer) {
	fmt.Fprint(w, "\nEnvironment:\n")
	for _, e := range environment {
		fmt.Fprintf(w, "  %-34s %s\n", e.name, e.doc)
	}
}

// checkEnvironment validates anestar's own variables before a command runs, so that a typo is reported at
// once and not at the first kernel eval: the backend must be one the registry knows, the BLAS a known
// name, a forced BLAS must load, and the AMX switch must be auto or off.
func checkEnvironment() error {
	if b := strings.TrimSpace(os.Getenv(ane.EnvBackend)); b != "" && b != "auto" && !slices.Contains(backendNames(), b) {
		return fmt.Errorf("%s=%s: unknown backend (want auto, %s)", ane.EnvBackend, b, strings.Join(backendNames(), ", "))
	}
	if _, err := cpu.ParseAMXEnv(os.Getenv(cpu.AMXEnv)); err != nil {
		return err
	}
	if b := strings.ToLower(strings.TrimSpace(os.Getenv(cpu.BLASEnv))); b != "" && b != "auto" {
		if _, err := cpu.LoadBLAS(b); err != nil {
			return fmt.Errorf("%s=%s: %w", cpu.BLASEnv, b, err)
		}
	}
	return nil
}
