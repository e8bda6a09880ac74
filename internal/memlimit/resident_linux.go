package memlimit

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

func resident() (rss, peak uint64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	var haveRSS, havePeak bool
	sc := bufio.NewScanner(io.LimitReader(f, 64<<10))
	for sc.Scan() {
		name, val, found := strings.Cut(sc.Text(), ":")
		if !found || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, unit, _ := strings.Cut(strings.TrimSpace(val), " ")
		n, err := strconv.ParseUint(kb, 10, 64)
		if err != nil || unit != "kB" {
			return 0, 0, false
		}
		if name == "VmRSS" {
			rss, haveRSS = n<<10, true
		} else {
			peak, havePeak = n<<10, true
		}
	}
	return rss, peak, haveRSS && havePeak
}
