package cpu

import (
	"fmt"
	"strings"
)

// How the OpenBLAS core was chosen, the values of BLASInfo.CoreChoice.
const (
	CoreAuto    = "auto"    // chosen by the loader from the CPU's features
	CoreUser    = "user"    // named by the user's OPENBLAS_CORETYPE
	CoreLibrary = "library" // left to the library's own detection (no core fits the CPU's features)
	CoreNA      = "n.a."    // the implementation has no cores to choose from
)

// BLASInfo describes a loaded BLAS implementation, for reports.
type BLASInfo struct {
	Name       string // implementation name: "accelerate", "openblas", "gonum" or "reference"
	Version    string // the library's version where it reports one (OpenBLAS), else ""
	Config     string // the library's build description (openblas_get_config), else ""
	Core       string // the kernels in use (openblas_get_corename), else ""
	CoreChoice string // how Core was chosen: CoreAuto, CoreUser, CoreLibrary or CoreNA
	AutoCore   string // the core anestar chooses on this CPU when the user names none ("" for the library's own choice)
}

// CoreDiffers reports whether the user's OPENBLAS_CORETYPE chose other kernels than anestar would
// (AutoCore): String then names both, so that a user who set it long ago, or inherited it, sees the cost.
func (i BLASInfo) CoreDiffers() bool {
	return i.CoreChoice == CoreUser && i.AutoCore != "" && i.Core != "" && !strings.EqualFold(i.Core, i.AutoCore)
}

// String is one line for reports, such as "openblas 0.3.21, core SkylakeX (auto by features)", or
// "openblas 0.3.21, core Haswell (user's OPENBLAS_CORETYPE; anestar would choose SkylakeX)".
func (i BLASInfo) String() string {
	s := i.Name
	if i.Version != "" {
		s += " " + i.Version
	}
	if i.CoreChoice == CoreNA || i.CoreChoice == "" {
		return s + ", core n.a."
	}
	core := i.Core
	if core == "" {
		core = "unknown"
	}
	how := map[string]string{
		CoreAuto:    "auto by features",
		CoreUser:    "user's OPENBLAS_CORETYPE",
		CoreLibrary: "the library's own detection",
	}[i.CoreChoice]
	if i.CoreDiffers() {
		how += "; anestar would choose " + i.AutoCore
	}
	return fmt.Sprintf("%s, core %s (%s)", s, core, how)
}

// openBLASVersion extracts the version from openblas_get_config's text, which begins
// "OpenBLAS 0.3.21 ..."; "" when it does not.
func openBLASVersion(config string) string {
	f := strings.Fields(config)
	if len(f) < 2 || f[0] != "OpenBLAS" {
		return ""
	}
	return f[1]
}

// CurrentBLASInfo describes the implementation Sgemm uses; its Name is "none" when the forced one
// failed to load.
func CurrentBLASInfo() BLASInfo {
	if s := currentBLAS(); s.lib != nil {
		return s.lib.info
	}
	return BLASInfo{Name: "none", CoreChoice: CoreNA}
}
