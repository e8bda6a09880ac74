package cpu

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// forgetPeaks drops this process's peak answers, as a new process would start.
func forgetPeaks() {
	peakMu.Lock()
	clear(peakSeen)
	peakMu.Unlock()
}

// The peak is measured once per machine and BLAS, written to the cache directory, read back by later
// processes, and measured again (and rewritten) when the file is invalid.
func TestPeakFLOPSCache(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheDirEnv, dir)
	measured := 0
	rate := 3.5e10
	old := measurePeak
	measurePeak = func() float64 { measured++; return rate }
	t.Cleanup(func() { measurePeak = old; forgetPeaks() })
	forgetPeaks()

	path := PeakFLOPSFile()
	if filepath.Dir(path) != dir || !strings.HasPrefix(filepath.Base(path), "peak-flops-") {
		t.Fatalf("PeakFLOPSFile() = %q, want a peak-flops-* file in %s", path, dir)
	}
	if got := PeakFLOPS(); got != rate || measured != 1 {
		t.Fatalf("first PeakFLOPS = %g after %d measurements, want %g after 1", got, measured, rate)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p peakFile
	if err := json.Unmarshal(data, &p); err != nil || p.FLOPS != rate || p.Key != peakKey() || p.Measured == "" {
		t.Fatalf("cache file %s holds %+v (%v)", path, p, err)
	}

	// A later process reads the file and measures nothing, even when a measurement would differ.
	rate = 9e10
	forgetPeaks()
	if got := PeakFLOPS(); got != 3.5e10 || measured != 1 {
		t.Fatalf("PeakFLOPS from the cache = %g after %d measurements, want 3.5e10 after 1", got, measured)
	}

	// Invalid files are ignored: measured again and replaced.
	for _, bad := range []string{
		"{not json",
		`{"key": "another machine", "flops": 1e11}`,
		strings.Replace(string(data), "35000000000", "-1", 1),
		strings.Replace(string(data), "35000000000", "1e300", 1),
		"",
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		forgetPeaks()
		before := measured
		if got := PeakFLOPS(); got != rate || measured != before+1 {
			t.Errorf("with cache %q: PeakFLOPS = %g after %d new measurements, want %g after 1", bad, got, measured-before, rate)
		}
		if got := readPeak(path, peakKey()); got != rate {
			t.Errorf("with cache %q: the file was not rewritten (reads %g)", bad, got)
		}
	}

	// A symlink in the file's place is not followed, even to a valid file.
	elsewhere := filepath.Join(dir, "elsewhere.json")
	if err := os.Rename(path, elsewhere); err != nil {
		t.Fatal(err)
	}
	if got := readPeak(elsewhere, peakKey()); got != rate {
		t.Fatalf("readPeak(%s) = %g, want %g", elsewhere, got, rate)
	}
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	if got := readPeak(path, peakKey()); got != 0 {
		t.Errorf("readPeak through a symlink = %g, want 0", got)
	}
}

// The measurement itself gives a plausible rate with whatever BLAS is current.
func TestMeasureSgemmPeak(t *testing.T) {
	if f := measureSgemmPeak(); !validPeak(f) || f < 1e8 {
		t.Errorf("measureSgemmPeak() = %g FLOP/s, want above 0.1 GFLOP/s", f)
	}
}
