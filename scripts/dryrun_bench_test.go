package scripts

import (
	"context"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/anestar/anestar/builtins"
)

// BenchmarkDryRunLarge is `anestar check scripts/train_layer.star --set dim=8196 --set heads=12`, a layer of
// 319M parameters whose six kernels hold 1.2 GB of fp16 weights, each run in a new process as the command
// runs: a dry run draws no weights and encodes none, and the zero tensors the script allocates stay
// untouched pages, so it takes a fraction of a second. (In one long-lived process, repeated dry runs of
// that size pay for clearing the gigabytes of reused memory those tensors take.)
func BenchmarkDryRunLarge(b *testing.B) {
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDryRunLargeChild$")
		cmd.Env = append(os.Environ(), "ANESTAR_DRYRUN_CHILD=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
	}
}

// TestDryRunLargeChild is the process BenchmarkDryRunLarge starts; alone it does nothing.
func TestDryRunLargeChild(t *testing.T) {
	if os.Getenv("ANESTAR_DRYRUN_CHILD") == "" {
		t.Skip("run by BenchmarkDryRunLarge")
	}
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script: trainLayer, BackendName: "emulator", DryRun: true, Stdout: io.Discard,
		Params: map[string]string{"dim": "8196", "heads": "12"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checked) != 6 {
		t.Fatalf("%d programs checked, want 6", len(res.Checked))
	}
}
