package cpu

import "testing"

func TestBLASInfoString(t *testing.T) {
	for _, tc := range []struct {
		info BLASInfo
		want string
	}{
		{BLASInfo{Name: "openblas", Version: "0.3.21", Core: "SkylakeX", CoreChoice: CoreAuto}, "openblas 0.3.21, core SkylakeX (auto by features)"},
		{BLASInfo{Name: "openblas", Version: "0.3.21", Core: "Prescott", CoreChoice: CoreUser}, "openblas 0.3.21, core Prescott (user's OPENBLAS_CORETYPE)"},
		{BLASInfo{Name: "openblas", Version: "0.3.21", Core: "Haswell", CoreChoice: CoreUser, AutoCore: "SkylakeX"},
			"openblas 0.3.21, core Haswell (user's OPENBLAS_CORETYPE; anestar would choose SkylakeX)"},
		{BLASInfo{Name: "openblas", Core: "SKYLAKEX", CoreChoice: CoreUser, AutoCore: "SkylakeX"}, "openblas, core SKYLAKEX (user's OPENBLAS_CORETYPE)"},
		{BLASInfo{Name: "openblas", Core: "Zen", CoreChoice: CoreLibrary, AutoCore: "Haswell"}, "openblas, core Zen (the library's own detection)"},
		{BLASInfo{Name: "openblas", CoreChoice: CoreAuto}, "openblas, core unknown (auto by features)"},
		{BLASInfo{Name: "gonum", CoreChoice: CoreNA}, "gonum, core n.a."},
	} {
		if got := tc.info.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.info, got, tc.want)
		}
	}
	for config, want := range map[string]string{
		"OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY SkylakeX MAX_THREADS=64": "0.3.21",
		"OpenBLAS 0.3.28.dev":   "0.3.28.dev",
		"OpenBLAS":              "",
		"GotoBLAS 1.13 Haswell": "",
		"":                      "",
	} {
		if got := openBLASVersion(config); got != want {
			t.Errorf("openBLASVersion(%q) = %q, want %q", config, got, want)
		}
	}
	// Every implementation that loads describes itself under its own name.
	for _, name := range append(blasOrder[:len(blasOrder):len(blasOrder)], ReferenceBLAS) {
		lib, err := loadLibrary(name)
		if err != nil {
			continue
		}
		if lib.info.Name != name || lib.info.CoreChoice == "" {
			t.Errorf("%s describes itself as %#v", name, lib.info)
		}
	}
}
