package private

import "github.com/anestar/anestar/ane"

func init() {
	ane.Register(ane.Entry{
		Name:     Name,
		Summary:  "Apple Neural Engine through the private AppleNeuralEngine.framework (darwin/arm64)",
		Priority: 10,
		Probe:    Probe,
		Open: func(opts ane.Options) (ane.Backend, error) {
			b, err := Open(opts)
			if err != nil {
				return nil, err
			}
			return b, nil
		},
	})
}
