package builtins

import (
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
)

// gradSrc builds a two-input program and its backward; tail uses them.
const gradSrc = `
load("assert.star", "assert")
p = mil.program()
x = p.cast(name = "xh", x = p.input("x", "fp32", [1, 4, 1, 32]), dtype = "fp16")
u = p.cast(name = "uh", x = p.input("u", "fp32", [1, 2, 1, 32]), dtype = "fp16")
m = p.matmul(name = "m", x = p.reshape(name = "xm", x = x, shape = [1, 1, 4, 32]), y = p.reshape(name = "um", x = u, shape = [1, 1, 2, 32]), transpose_y = True)
y = p.cast(name = "y", x = p.reshape(name = "yr", x = p.sigmoid(name = "s", x = m), shape = [1, 4, 1, 2]), dtype = "fp32")
p.output(y)
g = mil.grad(p, wrt = ["x", "u"], save = ["s"])
`

// TestGradBuiltin: mil.grad's programs compile, their parts are fed and read by name (views of the
// packed surfaces in the strict mode, the declared surfaces in the relaxed one), and give the gradient
// computed on the host.
func TestGradBuiltin(t *testing.T) {
	tail := `
assert.eq([v.name for v in g.forward.outputs], ["y", "s"])
assert.eq([v.name for v in g.backward.inputs], ["x", "u", "s", "d_y"])
assert.eq([v.name for v in g.backward.outputs], ["d_x", "d_u"])
kf = ane.compile(g.forward)
kb = ane.compile(g.backward)
tensor.seed(1)
X, U = tensor.normal([4, 32]), tensor.normal([2, 32])
kf.input("x").write(X)
kf.input("u").write(U)
kf.eval()
S = kf.output("s").read()
assert.eq(S.shape, (1, 8))  # [1, 1, 4, 2]: one channel of 8
S = S.reshape(4, 2)
D = tensor.ones(4, 2)
b = kb.bind()
for k in [kb, b]:
    k.input("x").write(X)
    k.input("u").write(U)
    k.input("s").copy_from(kf.output("s"))
    k.input("d_y").write(D)
    k.eval()
# d_u[j] = sum_i s(1-s)[i, j] x[i]: the host's version.
SS = S.copy()
for i in range(4):
    for j in range(2):
        v = SS[i][j]
        SS[i][j] = v * (1 - v)
DU = tensor.zeros(2, 32)
for j in range(2):
    for i in range(4):
        DU[j].axpy_(SS[i][j], X[i])
for k in [kb, b]:
    got = k.output("d_u").read()
    assert.true(tensor.allclose(got, DU, rtol = 2e-2, atol = 2e-2), "d_u differs from the host's")
NPORTS = (len(kb.inputs), len(kb.outputs))
TEXT = g.backward.text()
`
	for _, relaxed := range []bool{false, true} {
		out, res, err := runStar(t, Config{Script: "grad.star", Source: []byte(gradSrc + tail), BackendName: "emulator", Settings: ane.Settings{Relaxed: relaxed}})
		if err != nil {
			t.Fatalf("relaxed %v: %v\n%s", relaxed, err, out)
		}
		ports := res.Globals["NPORTS"].String()
		text := res.Globals["TEXT"].String()
		if relaxed && ports != "(4, 2)" || !relaxed && ports != "(1, 1)" {
			t.Errorf("relaxed %v: kernel ports %s", relaxed, ports)
		}
		if packed := strings.Contains(text, "packed_input"); packed == relaxed {
			t.Errorf("relaxed %v: text() shows packed %v", relaxed, packed)
		}
	}
}

// TestGradBuiltinErrors: bad requests name the program's op and the script line that built it.
func TestGradBuiltinErrors(t *testing.T) {
	for _, c := range []struct{ tail, want string }{
		{`mil.grad(p, wrt = ["q"])`, `wrt names "q", which is not an input`},
		{`mil.grad(p, wrt = ["x"], save = ["nope"])`, `save names "nope", which is not a var`},
		{`mil.grad(p, wrt = "x")`, "got string, want list"},
		{`
q = mil.program()
e = q.exp(name = "e", x = q.input("x", "fp16", [1, 2, 1, 32]))
q.output(q.mul(name = "o", x = e, y = e))
mil.grad(q, wrt = ["x"])`, `op "e" (exp): mil.grad: no gradient rule for exp (rules: add, cast, concat`},
		{`
k = ane.compile(g.backward)
k.input("d_q")`, `no input called "d_q" (the program's inputs: x, u, s, d_y)`},
		{`
k = ane.compile(g.backward)
k.input("d_y").write(tensor.ones(5, 2))`, "out of range"},
	} {
		_, _, err := runStar(t, Config{Script: "grad.star", Source: []byte(gradSrc + c.tail), BackendName: "emulator"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nerror %v, want one containing %q", c.tail, err, c.want)
		}
	}
	_, _, err := runStar(t, Config{Script: "grad.star", Source: []byte(gradSrc + `
q = mil.program()
e = q.exp(name = "e", x = q.input("x", "fp16", [1, 2, 1, 32]))
q.output(q.mul(name = "o", x = e, y = e))
mil.grad(q, wrt = ["x"])`), BackendName: "emulator"})
	if err == nil || !strings.Contains(err.Error(), "built at grad.star:12") {
		t.Errorf("no script line in %v", err)
	}
}
