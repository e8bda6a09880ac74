package private

import (
	"fmt"
	"strings"

	"github.com/anestar/anestar/ane"
)

func init() {
	ane.Register(ane.Entry{
		Name:     Name,
		Summary:  "Apple Neural Engine through the private AppleNeuralEngine.framework (darwin/arm64)",
		Priority: 10,
		Probe:    Probe,
		Open: func(s ane.Settings) (ane.Backend, error) {
			if err := refuseSettings(s); err != nil {
				return nil, err
			}
			chip, err := ane.ParseChip(s.Chip)
			if err != nil {
				return nil, err
			}
			b, err := Open()
			if err != nil {
				return nil, err
			}
			b.chip = chip
			return b, nil
		},
	})
}

// cannotHonour says, for each flag of ane.Settings, why the ANE backend cannot honour it: every one is
// an emulator option, and the ANE computes in its own fp16 arithmetic and runs only what it accepts.
var cannotHonour = map[string]string{
	"--fp32":           "the ANE computes in fp16 and cannot turn its rounding off",
	"--check-numerics": "the ANE does not report which op overflowed",
	"--relaxed":        "the ANE refuses the programs that relaxed mode lets through",
}

// refuseSettings is the error for settings the ANE cannot honour, or nil when none is set.
func refuseSettings(s ane.Settings) error {
	var why []string
	for _, f := range s.Flags() {
		if !strings.HasPrefix(f, "--chip=") { // honoured: the chip's limits apply
			why = append(why, f+": "+cannotHonour[f])
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("the ane backend cannot honour %s; it is an emulator option (use --backend emulator)", strings.Join(why, "; "))
}
