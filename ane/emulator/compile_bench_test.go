package emulator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// chainProgram is a program of n transposes, each with a const perm of its own (an argument the
// compiler must read at compile time): 2n ops.
func chainProgram(n int) string {
	var b strings.Builder
	b.WriteString("program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 4, 1, 32]> x) {\n")
	prev := "x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "        tensor<int32, [4]> c%d = const()[name = string(\"c%d\"), val = tensor<int32, [4]>([0, 1, 2, 3])];\n", i, i)
		fmt.Fprintf(&b, "        tensor<fp16, [1, 4, 1, 32]> a%d = transpose(x = %s, perm = c%d)[name = string(\"a%d\")];\n", i, prev, i, i)
		prev = fmt.Sprintf("a%d", i)
	}
	fmt.Fprintf(&b, "    } -> (%s);\n}\n", prev)
	return b.String()
}

// BenchmarkCompileOps compiles programs of 10k and 40k ops: the time per op must not grow with the
// program (it did when every const argument was found by a scan of all ops).
func BenchmarkCompileOps(b *testing.B) {
	for _, ops := range []int{10000, 40000} {
		p, err := mil.Parse("chain.mil", []byte(chainProgram(ops/2)))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("ops=%d", ops), func(b *testing.B) {
			be := New(Options{Relaxed: true})
			for b.Loop() {
				k, err := be.Compile(p, nil)
				if err != nil {
					b.Fatal(err)
				}
				k.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/op-in-program")
		})
	}
}

// elementwiseChain is a program of n relus, each on the one before: one chain of n chainable steps.
func elementwiseChain(n int) string {
	var b strings.Builder
	b.WriteString("program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 32, 1, 32]> x) {\n")
	prev := "x"
	for i := range n {
		fmt.Fprintf(&b, "        tensor<fp16, [1, 32, 1, 32]> y%d = relu(x = %s)[name = string(\"y%d\")];\n", i, prev, i)
		prev = fmt.Sprintf("y%d", i)
	}
	fmt.Fprintf(&b, "    } -> (%s);\n}\n", prev)
	return b.String()
}

// BenchmarkCompileElementwiseChain parses and compiles chains of 10k and 40k elementwise ops, as
// `anestar mil run` does: the time per op must not grow with the chain (planning an unbounded chain
// checked each op against all before it: 40k ops took 5.4 s here, and 31-41 s in `anestar mil run`
// as the issue measured it).
func BenchmarkCompileElementwiseChain(b *testing.B) {
	for _, ops := range []int{10000, 40000} {
		src := []byte(elementwiseChain(ops))
		b.Run(fmt.Sprintf("ops=%d", ops), func(b *testing.B) {
			be := New(Options{Relaxed: true})
			for b.Loop() {
				p, err := mil.Parse("chain.mil", src)
				if err != nil {
					b.Fatal(err)
				}
				k, err := be.Compile(p, nil)
				if err != nil {
					b.Fatal(err)
				}
				k.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ops), "ns/op-in-program")
		})
	}
}
