package ane

import (
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// convProgram is a conv of an fp16 input [1, c, 1, w] to 4 channels with a kernel kw wide.
func convProgram(t *testing.T, c, w, kw int) *mil.Program {
	t.Helper()
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, c, 1, w))
	wt := b.Weight("W", mil.FP16, []int{4, c, 1, kw}, make([]float32, 4*c*kw))
	y := b.Conv("y", x, wt, nil)
	b.Output(y)
	p, _, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestChipLimits: a 20480-wide input is refused on M1 (naming its 16384 and the chip) and under all,
// taken on M4; a conv kernel 14 wide is refused through M3 (13) and taken on M4 (15).
func TestChipLimits(t *testing.T) {
	m1, _ := ParseChip("m1")
	m4, _ := ParseChip("m4")
	wide := convProgram(t, 4, 20480, 1)
	for _, c := range []struct {
		chip Chip
		want Support
	}{{m1, Refused}, {ChipAll, Refused}, {m4, Proven}} {
		v := EligibleOn(wide, c.chip)
		if v.Support() != c.want {
			t.Errorf("20480 wide on %s: %s, want %s: %v", c.chip.Name, v.Support(), c.want, v.Findings)
		}
		if c.want == Refused && !strings.Contains(v.Err().Error(), "takes at most 16384") {
			t.Errorf("20480 wide on %s: %v, want a refusal naming 16384", c.chip.Name, v.Err())
		}
		if v.Chip != c.chip.Name {
			t.Errorf("verdict of chip %q, want %q", v.Chip, c.chip.Name)
		}
	}
	kernel := func(chip Chip) []Finding { // the conv-kernel-width refusals of a 14-wide kernel
		var out []Finding
		for _, f := range EligibleOn(convProgram(t, 4, 64, 14), chip).With(Refused) {
			if f.Rule == RuleConvWidth {
				out = append(out, f)
			}
		}
		return out
	}
	if f := kernel(m1); len(f) != 1 || !strings.Contains(f[0].String(), "at most 13 (chip m1)") {
		t.Errorf("a 14-wide kernel on m1: %v", f)
	}
	if f := kernel(m4); len(f) != 0 {
		t.Errorf("a 14-wide kernel on m4: %v", f)
	}
	if v := EligibleOn(convProgram(t, 70000, 32, 1), m4); v.Support() != Refused || !strings.Contains(v.Err().Error(), "the channel axis") {
		t.Errorf("70000 channels on m4: %v", v.Err())
	}
}

func TestParseChip(t *testing.T) {
	for _, n := range []string{"m1", "M2", " m3 ", "m4", "m5", "all"} {
		if c, err := ParseChip(n); err != nil || c.Name != strings.ToLower(strings.TrimSpace(n)) {
			t.Errorf("ParseChip(%q) = %v, %v", n, c.Name, err)
		}
	}
	if _, err := ParseChip("m9"); err == nil || !strings.Contains(err.Error(), "m1, m2, m3, m4, m5, all") {
		t.Errorf("ParseChip(m9): %v", err)
	}
	if ChipAll.SpatialCap != 16384 || ChipAll.ConvWidth != 13 || !ChipAll.SliceSaturates || len(ChipAll.Notes) < 4 {
		t.Errorf("ChipAll is not every chip's strictest: %+v", ChipAll)
	}
	for brand, want := range map[string]string{"Apple M1 Pro": "m1", "Apple M3": "m3", "Apple M5 Max": "m5", "Apple M7": "m5", "Intel(R) Xeon(R)": "", "Apple": ""} {
		if got := chipFromBrand(brand); got != want {
			t.Errorf("chipFromBrand(%q) = %q, want %q", brand, got, want)
		}
	}
}
