package main

import (
	"fmt"
	"io"

	"github.com/anestar/anestar/ane"
)

// writeVerdict prints what the ANE is known to do with a program (ane.Eligible): one line with the
// verdict, then each refused part as an error and each unknown one as a warning, indented by indent.
func writeVerdict(w io.Writer, indent string, v ane.Verdict) {
	refused, unknown := v.With(ane.Refused), v.With(ane.Unknown)
	switch {
	case len(refused) > 0:
		fmt.Fprintf(w, "%sane: refused (%s, %s)\n", indent, plural(len(refused), "refusal"), plural(len(unknown), "warning"))
	case len(unknown) > 0:
		fmt.Fprintf(w, "%sane: eligible, with %s (not known either way on hardware)\n", indent, plural(len(unknown), "warning"))
	default:
		fmt.Fprintf(w, "%sane: eligible (every op and I/O proven on hardware)\n", indent)
	}
	for _, f := range refused {
		fmt.Fprintf(w, "%s  refused [%s]: %s\n", indent, f.Rule, f)
	}
	for _, f := range unknown {
		fmt.Fprintf(w, "%s  warning [%s]: %s\n", indent, f.Rule, f)
	}
}
