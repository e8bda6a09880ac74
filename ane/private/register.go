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
			b, err := Open()
			if err != nil {
				return nil, err
			}
			return b, nil
		},
	})
}

// refuseSettings is the error for settings the ANE cannot honour: every one of them is an emulator
// option, and the ANE computes in its own fp16 arithmetic and runs only what it accepts.
func refuseSettings(s ane.Settings) error {
	var why []string
	if s.FP32 {
		why = append(why, "--fp32: the ANE computes in fp16 and cannot turn its rounding off")
	}
	if s.CheckNumerics {
		why = append(why, "--check-numerics: the ANE does not report which op overflowed")
	}
	if s.Relaxed {
		why = append(why, "--relaxed: the ANE refuses the programs that relaxed mode lets through")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("the ane backend cannot honour %s; it is an emulator option (use --backend emulator)", strings.Join(why, "; "))
}
