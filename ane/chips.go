package ane

import (
	"fmt"
	"strings"
	"sync"
)

// The ANE generations' differences, as data: each chip's limits (refusals) and the quirks reported
// for one of its variants or contested between sources (warnings, with their sources). EligibleOn
// applies a chip's limits; ChipAll is every chip's at once, so that what passes it runs on any Mac.

// Where the chip facts come from.
const (
	srcForgeChips   = "sbryngelson/ANEForge docs/cross-chip.md (families M1=A13 .. M4, M5=A16; extent caps measured on M1, M2 and M5)"
	srcForgeSlice   = "sbryngelson/ANEForge docs/cross-chip.md, The h13 slice-saturation warning"
	srcMaderixChips = "maderix/ANE benchmarks/community_results.json (report of 2026-03-04)"
	srcMaderixM5    = "maderix/ANE README.md, Hardware Characterization: Apple M5"
	srcMaderixLimit = "maderix/ANE README.md, Limitations (~119 compile limit)"
	srcMinIOSize    = "Orion (49,152 bytes), iOS reports (16 KB), another report (about 2 KB); none checked here"
)

// A ChipNote is a warning of a chip's profile: a quirk reported for one variant, or a contested fact.
type ChipNote struct {
	Text   string
	Source string
}

// A Chip is what is known of one ANE generation.
type Chip struct {
	Name       string // m1 .. m5, or all
	Family     string // ANEForge's capability family: A13 (M1), A14, A15, A16 (M4 and M5)
	SpatialCap int    // the largest extent of a tensor axis other than the channels
	ChannelCap int    // the largest channel count (axis 1 of a rank-4 tensor)
	ConvWidth  int    // the widest conv kernel it compiles
	// SliceSaturates says a slice at a nonzero last-axis offset clamps |values| > 4094 to ±inf (A13).
	SliceSaturates bool
	Budget         int        // about how many programs a process compiles before the compiler leaks
	Notes          []ChipNote // warnings: quirks of a variant, contested facts
}

// Chips are the generations, oldest first.
var Chips = []Chip{
	{Name: "m1", Family: "A13", SpatialCap: 16384, ChannelCap: 65536, ConvWidth: 13, SliceSaturates: true, Budget: 100, Notes: []ChipNote{
		{"M1 Pro and M1 Max: maderix's standalone benchmarks (fp32 I/O) fail, its fp16-I/O training kernels run", srcMaderixChips},
		{"a slice at a nonzero width offset (the packing slices parts apart so) turns |values| above 4094 into ±inf: keep activations, and loss-scaled gradients, below 4094", srcForgeSlice},
	}},
	{Name: "m2", Family: "A14", SpatialCap: 16384, ChannelCap: 65536, ConvWidth: 13, Budget: 100},
	{Name: "m3", Family: "A15", SpatialCap: 16384, ChannelCap: 65536, ConvWidth: 13, Budget: 100, Notes: []ChipNote{
		{"M3 Pro: in maderix's channel sweep only 512-channel convs compiled", srcMaderixChips},
	}},
	{Name: "m4", Family: "A16", SpatialCap: 65536, ChannelCap: 65536, ConvWidth: 15, Budget: 100, Notes: []ChipNote{
		{"M4 Pro: maderix's sram_probe and inmem_bench fail, its training kernels run", srcMaderixChips},
	}},
	{Name: "m5", Family: "A16", SpatialCap: 65536, ChannelCap: 65536, ConvWidth: 15, Budget: 100, Notes: []ChipNote{
		{"weights as inputs on M5: maderix's notes ask for program(1.3) with ios17 (anestar writes ios18, which its M5 training runs used) and 128-byte aligned surfaces", srcMaderixM5},
	}},
}

// generalNotes are the warnings that hold for every chip.
var generalNotes = []ChipNote{
	{"about 100 compiles per process (maderix measured 119 before the compiler leaks): scripts that compile again and again restart the process first", srcMaderixLimit},
	{"the smallest I/O surface that runs is contested (49,152 bytes, 16 KB or about 2 KB): a warning, not a rule", srcMinIOSize},
}

// ChipAll is every chip's limits at once (the strictest of each) and every chip's warnings: what
// passes it is known to fit any Mac.
var ChipAll = func() Chip {
	all := Chip{Name: "all", Family: "A13-A16", SpatialCap: 1 << 30, ChannelCap: 1 << 30, ConvWidth: 1 << 30}
	for _, c := range Chips {
		all.SpatialCap, all.ChannelCap = min(all.SpatialCap, c.SpatialCap), min(all.ChannelCap, c.ChannelCap)
		all.ConvWidth, all.Budget = min(all.ConvWidth, c.ConvWidth), max(all.Budget, c.Budget)
		all.SliceSaturates = all.SliceSaturates || c.SliceSaturates
		for _, n := range c.Notes {
			all.Notes = append(all.Notes, ChipNote{c.Name + ": " + n.Text, n.Source})
		}
	}
	return all
}()

// ChipNames are the names a --chip flag takes.
func ChipNames() []string {
	names := []string{}
	for _, c := range Chips {
		names = append(names, c.Name)
	}
	return append(names, "all")
}

// ParseChip returns the chip called name (m1 .. m5 or all; "" is the default, DefaultChip).
func ParseChip(name string) (Chip, error) {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case "":
		return DefaultChip(), nil
	case "all":
		return ChipAll, nil
	default:
		if c, ok := chipNamed(n); ok {
			return c, nil
		}
	}
	return Chip{}, fmt.Errorf("unknown chip %q: want one of %s", name, strings.Join(ChipNames(), ", "))
}

// DefaultChip is the chip rules apply to when none is given: the host's where it is an Apple M chip
// (its CPU brand string names it), else ChipAll.
func DefaultChip() Chip { return defaultChip() }

// defaultChip probes the host once (a sysctl on macOS): every compile asks.
var defaultChip = sync.OnceValue(func() Chip {
	if c, ok := chipNamed(hostChipName()); ok {
		return c
	}
	return ChipAll
})

// chipNamed returns the generation called name (m1 .. m5).
func chipNamed(name string) (Chip, bool) {
	for _, c := range Chips {
		if c.Name == name {
			return c, true
		}
	}
	return Chip{}, false
}

// chipFromBrand maps a CPU brand string ("Apple M3 Pro") to a chip name ("m3"), "" when it names none.
func chipFromBrand(brand string) string {
	f := strings.Fields(brand)
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "Apple" && len(f[i+1]) == 2 && f[i+1][0] == 'M' && f[i+1][1] >= '1' && f[i+1][1] <= '9' {
			if name := strings.ToLower(f[i+1]); name <= "m5" {
				return name
			}
			return "m5" // a later chip: the newest known
		}
	}
	return ""
}

// AllNotes returns the chip's warnings and the ones every chip has.
func (c Chip) AllNotes() []ChipNote { return append(append([]ChipNote{}, c.Notes...), generalNotes...) }

// ChipSources returns where the chip facts come from.
func ChipSources() []string {
	return []string{srcForgeChips, srcForgeSlice, srcMaderixChips, srcMaderixM5, srcMaderixLimit}
}
