package deps

import (
	_ "github.com/ebitengine/purego"
	_ "github.com/spf13/pflag"
	_ "go.starlark.net/starlark"
	_ "gonum.org/v1/gonum/blas/gonum"
	_ "gonum.org/v1/plot"
)
