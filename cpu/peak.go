package cpu

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/anestar/anestar/internal/atomicfile"
)

// The peak sgemm rate is the denominator of the utilisation figures in reports. Measured afresh in each
// process it moved tenfold between runs on one machine (a first product pays for thread and buffer set-up,
// and a busy machine slows any single measurement), so it is measured once per machine, BLAS, core and
// thread setting and kept in the user's cache directory; RecalibratePeakFLOPS (anestar backends
// --recalibrate) or deleting the file asks for a new measurement.

// CacheDirEnv is the environment variable that names the directory of anestar's cached measurements;
// unset, it is os.UserCacheDir()/anestar (under `go test`, nothing is cached unless it is set).
const CacheDirEnv = "ANESTAR_CACHE_DIR"

// peakSize is the side of the square product whose rate is the peak.
const peakSize = 512

var (
	peakMu   sync.Mutex
	peakSeen = map[string]float64{} // key -> FLOP/s, this process's answers
	// measurePeak measures the current BLAS's rate in FLOP/s.
	measurePeak = measureSgemmPeak
)

// peakFile is the JSON form of a cached peak.
type peakFile struct {
	Key      string  `json:"key"`      // what was measured: machine, BLAS, core, threads
	FLOPS    float64 `json:"flops"`    // the rate, FLOP/s
	Measured string  `json:"measured"` // when, RFC 3339
}

// PeakFLOPS is the rate in FLOP/s of a 512x512x512 Sgemm with the current BLAS: what a large product
// reaches on this machine, the fair denominator of utilisation figures on the CPU. It is measured once
// per machine, BLAS, core and thread count and cached in PeakFLOPSFile; 0 when no BLAS loads.
func PeakFLOPS() float64 {
	key := peakKey()
	peakMu.Lock()
	defer peakMu.Unlock()
	if f, ok := peakSeen[key]; ok {
		return f
	}
	path := peakPath(key)
	f := readPeak(path, key)
	if f == 0 {
		if f = measurePeak(); f == 0 {
			return 0
		}
		writePeak(path, peakFile{Key: key, FLOPS: f, Measured: time.Now().UTC().Format(time.RFC3339)})
	}
	peakSeen[key] = f
	return f
}

// RecalibratePeakFLOPS measures the peak afresh, replaces the cached figure (a peak measured while the
// machine was busy stays low until then) and returns it; 0 when no BLAS loads.
func RecalibratePeakFLOPS() float64 {
	key := peakKey()
	peakMu.Lock()
	defer peakMu.Unlock()
	f := measurePeak()
	if f == 0 {
		return 0
	}
	writePeak(peakPath(key), peakFile{Key: key, FLOPS: f, Measured: time.Now().UTC().Format(time.RFC3339)})
	peakSeen[key] = f
	return f
}

// PeakFLOPSFile is the file that caches PeakFLOPS for the current BLAS, or "" when there is none
// (no cache directory).
func PeakFLOPSFile() string { return peakPath(peakKey()) }

// inTest reports whether this is a test binary (one whose flags include the testing package's
// -test.v), whose runs must not write the user's cache; asked without importing testing into the
// production code.
func inTest() bool { return flag.Lookup("test.v") != nil }

// cacheDir is the directory of cached measurements, "" for none.
func cacheDir() string {
	if d := os.Getenv(CacheDirEnv); d != "" {
		return d
	}
	if inTest() {
		return ""
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "anestar")
}

// peakKey names what the peak depends on: the machine, the BLAS with its version and core, and the
// parallelism.
func peakKey() string {
	host, _ := os.Hostname()
	b := CurrentBLASInfo()
	return fmt.Sprintf("host %s; cpu %s; %s/%s; GOMAXPROCS %d; BLAS %s %s, core %s; BLAS threads %d",
		host, cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), b.Name, b.Version, b.Core, BLASThreads())
}

// peakPath is the cache file for key.
func peakPath(key string) string {
	dir := cacheDir()
	if dir == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, "peak-flops-"+hex.EncodeToString(sum[:8])+".json")
}

// cpuModel is the CPU's model name from /proc/cpuinfo, or "" where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if name, val, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(val)
		}
	}
	return ""
}

// validPeak reports whether f is a plausible rate (1 MFLOP/s to 100 PFLOP/s).
func validPeak(f float64) bool { return f >= 1e6 && f <= 1e17 && !math.IsNaN(f) }

// readPeak returns the rate cached in path for key, or 0 when the file is missing, not a small regular
// file, malformed, for another key or implausible.
func readPeak(path, key string) float64 {
	if path == "" {
		return 0
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() > 64<<10 {
		return 0
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var p peakFile
	if json.Unmarshal(data, &p) != nil || p.Key != key || !validPeak(p.FLOPS) {
		return 0
	}
	return p.FLOPS
}

// writePeak stores p in path atomically; a cache that cannot be written is no error (the peak is then
// measured again by the next process).
func writePeak(path string, p peakFile) {
	if path == "" {
		return
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		atomicfile.Write(path, append(data, '\n'), 0o644)
	}
}

// measureSgemmPeak times peakSize^3 products with Sgemm after one untimed product (which pays for the
// library's set-up): at least 5 and for at least 0.3 s, up to 100, and returns the best rate; 0 when
// Sgemm fails.
func measureSgemmPeak() float64 {
	const n = peakSize
	a := quarters(n*n, 3)
	c := make([]float32, n*n)
	if Sgemm(false, false, n, n, n, 1, a, n, a, n, 0, c, n) != nil {
		return 0
	}
	best := math.Inf(1)
	start := time.Now()
	for i := 0; i < 100 && (i < 5 || time.Since(start) < 300*time.Millisecond); i++ {
		t := time.Now()
		if Sgemm(false, false, n, n, n, 1, a, n, a, n, 0, c, n) != nil {
			return 0
		}
		best = min(best, time.Since(t).Seconds())
	}
	return 2 * n * n * n / math.Max(best, 1e-9)
}
