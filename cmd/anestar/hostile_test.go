package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anestar/anestar/ckpt"
)

// hostileCase is one bad input: the command line (files made in dir), and the memory limit in KB
// it runs under (0: none).
type hostileCase struct {
	name   string
	args   []string
	ulimit int
}

// TestHostileInputs runs anestar on bad inputs (files that are devices, FIFOs, deep JSON, huge
// shapes, corrupt checkpoints, truncations and random byte flips) as separate processes, each under a
// time limit, and counts those that end in a Go runtime crash (fatal error, panic), a signal or a hang
// instead of an error. The target, and the test's condition, is none. ANESTAR_HOSTILE_MUTATIONS=N
// sets how many random corruptions of each file kind are tried (default 20; bench/reliability.sh
// uses more); ANESTAR_HOSTILE_ULIMIT=KB runs every case under that ulimit -v.
func TestHostileInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs anestar on many bad inputs")
	}
	mutations := 20
	if n, err := strconv.Atoi(os.Getenv("ANESTAR_HOSTILE_MUTATIONS")); err == nil && n >= 0 {
		mutations = n
	}
	dir := t.TempDir()
	cases := hostileCases(t, dir, mutations)
	if kb, err := strconv.Atoi(os.Getenv("ANESTAR_HOSTILE_ULIMIT")); err == nil && kb > 0 {
		for i := range cases {
			if cases[i].ulimit == 0 {
				cases[i].ulimit = kb // every case under one memory limit (KB, as ulimit -v)
			}
		}
	}
	fatal, errorsOK := 0, 0
	for _, c := range cases {
		outcome, out := runHostile(c)
		switch outcome {
		case "error", "ok":
			errorsOK++
		default:
			fatal++
			t.Errorf("%s: %s\n%s", c.name, outcome, firstLines(out, 6))
		}
	}
	t.Logf("%d bad inputs: %d ended in an error or a clean run, %d in a fatal runtime error, signal or hang", len(cases), errorsOK, fatal)
}

// runHostile runs one case and classifies its end: "ok", "error", "fatal" (a Go runtime crash),
// "signal" or "hang".
func runHostile(c hostileCase) (string, string) {
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if c.ulimit > 0 {
		line := fmt.Sprintf("ulimit -v %d; exec %q \"$@\"", c.ulimit, exe)
		cmd = exec.CommandContext(ctx, "sh", append([]string{"-c", line, "sh"}, c.args...)...)
	} else {
		cmd = exec.CommandContext(ctx, exe, c.args...)
	}
	cmd.Env = append(os.Environ(), "ANESTAR_TEST_AS_COMMAND=1", "ANESTAR_BLAS=gonum", "GOTRACEBACK=single")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	text := out.String()
	switch {
	case ctx.Err() != nil:
		return "hang", text
	case strings.Contains(text, "fatal error:") || strings.Contains(text, "panic:") || strings.Contains(text, "goroutine 1 ["):
		return "fatal", text
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "signal", text
	}
	if err != nil {
		return "error", text
	}
	return "ok", text
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// hostileCases writes the bad files into dir and returns the command lines that read them.
func hostileCases(t *testing.T, dir string, mutations int) []hostileCase {
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	script := func(name, src string) string { return write(name, []byte(src)) }
	var cases []hostileCase
	add := func(name string, ulimit int, args ...string) {
		cases = append(cases, hostileCase{name: name, args: args, ulimit: ulimit})
	}

	// Files that are not regular files, in every place a file is read.
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	specials := []string{"/dev/zero", "/dev/urandom", fifo, dir}
	for _, sp := range specials {
		add("ckpt ls "+sp, 0, "ckpt", "ls", sp)
		add("mil check "+sp, 0, "mil", "check", sp)
		add("plot "+sp, 0, "plot", sp, "-o", filepath.Join(dir, "p.png"))
		add("script "+sp, 0, "run", sp)
		add("ckpt.read "+sp, 0, script("read_"+filepath.Base(sp)+".star", fmt.Sprintf("ckpt.read(%q)\n", sp)))
		add("load_npy "+sp, 0, script("npy_"+filepath.Base(sp)+".star", fmt.Sprintf("tensor.load_npy(%q)\n", sp)))
		add("load_csv "+sp, 0, script("csv_"+filepath.Base(sp)+".star", fmt.Sprintf("tensor.load_csv(%q)\n", sp)))
		add("load_state "+sp, 0, script("state_"+filepath.Base(sp)+".star", fmt.Sprintf("ckpt.load_state(%q, {})\n", sp)))
	}

	// Deep JSON: in checkpoint metadata (read by a script and by ckpt ls) and in json.decode.
	deep := strings.Repeat("[", 10_000_000) + strings.Repeat("]", 10_000_000)
	deepCkpt := filepath.Join(dir, "deep.safetensors")
	if err := ckpt.Save(deepCkpt, &ckpt.File{Metadata: map[string]string{"x": deep}}, ckpt.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	add("ckpt ls deep metadata", 0, "ckpt", "ls", deepCkpt)
	add("ckpt.read deep metadata", 0, script("deep_read.star", fmt.Sprintf("c = ckpt.read(%q)\n", deepCkpt)))
	add("json.decode deep", 0, script("deep_json.star", "json.decode(\"[\" * 10000000 + \"]\" * 10000000)\n"))

	// Huge shapes and allocations.
	hugeConv := `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [2, 2, 1, 1]> W = const()[name = string("W"), val = tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<int32, [4]> pad = const()[name = string("pad"), val = tensor<int32, [4]>([0, 0, 2147483647, 2147483647])];
        tensor<fp16, [1, 2, 1, 32]> y = conv(x = x, weight = W, pad_type = string("custom"), pad = pad)[name = string("y")];
    } -> (y);
}
`
	add("mil run conv pad 2^31-1", 0, "mil", "run", "--relaxed", write("conv.mil", []byte(hugeConv)))
	big := strings.ReplaceAll(strings.ReplaceAll(reluMIL, "[1, 2, 1, 3]", "[1, 65536, 1, 65536]"), "", "")
	add("mil run [1,65536,1,65536]", 6000000, "mil", "run", "--relaxed", write("big.mil", []byte(big)))
	mid := strings.ReplaceAll(reluMIL, "[1, 2, 1, 3]", "[1, 16384, 1, 65536]")
	add("mil run [1,16384,1,65536] under ulimit", 6000000, "mil", "run", "--relaxed", write("mid.mil", []byte(mid)))
	add("tensor.zeros 8 GB under ulimit", 6000000, script("zeros.star", "t = tensor.zeros(65536, 32768)\n"))
	add("builder huge conv", 0, script("builder.star", `p = mil.program()
x = p.input("x", "fp16", [1, 2, 1, 32])
w = p.const(tensor.zeros(2, 2, 1, 1).add_(1.0))
y = p.op("conv", x = x, weight = w, pad_type = p.const("custom"), pad = p.const([0, 0, 2147483647, 2147483647]))
p.output(y)
ane.compile(p)
`))
	// 100 MB of text under a 4 GB address limit: tokenize and encode_file stream it, encode of the
	// whole string refuses or succeeds (each ended in a fatal out-of-memory before streaming).
	book, err := os.ReadFile("../../data/Isaac.Newton-Opticks.txt")
	if err != nil {
		t.Fatal(err)
	}
	bigText := write("big.txt", bytes.Repeat(book, 100<<20/len(book)+1))
	vocab := filepath.Join(dir, "vocab.bin")
	if code, out := runHostileSetup("tokenize", "-q", "--train", "512", "--save", vocab, write("book.txt", book)); code != 0 {
		t.Fatalf("training a vocabulary: %s", out)
	}
	add("tokenize 100 MB under ulimit", 4000000, "tokenize", "-q", "-t", vocab, bigText, "-o", filepath.Join(dir, "big.bin"))
	add("tokenizer.encode_file 100 MB under ulimit", 4000000, script("enc_file.star", fmt.Sprintf("tokenizer.read(%q).encode_file(%q)\n", vocab, bigText)))
	add("tokenizer.encode 100 MB string under ulimit", 4000000, script("enc_str.star", fmt.Sprintf("tokenizer.read(%q).encode(tokenizer.read_text(%q))\n", vocab, bigText)))
	add("ckpt.save keep=1e8", 0, script("keep.star", fmt.Sprintf("for i in range(3):\n    ckpt.save(%q, {\"w\": tensor.ones(2)}, keep = 100000000)\n", filepath.Join(dir, "keep.safetensors"))))

	// Checkpoints: a valid training state, then truncations and random byte flips of it, loaded
	// by ckpt ls and by ckpt.load_state.
	good := filepath.Join(dir, "good.safetensors")
	res := script("mk_state.star", fmt.Sprintf("W = {\"w1\": tensor.uniform([4, 8], -1, 1), \"b\": tensor.ones(4)}\nopt = optim.adam(W)\nckpt.save_state(%q, W, optim = opt, step = 5, meta = {\"loss\": 0.5})\n", good))
	if code, out := runHostileSetup(res); code != 0 {
		t.Fatalf("making the state: %s", out)
	}
	state, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	loader := func(path string) string {
		return script("load_"+filepath.Base(path)+".star", fmt.Sprintf("W = {\"w1\": tensor.zeros(4, 8), \"b\": tensor.zeros(4)}\nopt = optim.adam(W)\nckpt.load_state(%q, W, optim = opt)\n", path))
	}
	add("load_state good", 0, loader(good))
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < mutations; i++ {
		cut := write(fmt.Sprintf("cut%d.safetensors", i), state[:r.IntN(len(state))])
		add("truncated checkpoint", 0, "ckpt", "ls", cut)
		add("truncated checkpoint load_state", 0, loader(cut))
		flip := append([]byte(nil), state...)
		for k := 0; k < 1+r.IntN(4); k++ {
			flip[r.IntN(len(flip))] ^= byte(1 << r.IntN(8))
		}
		fp := write(fmt.Sprintf("flip%d.safetensors", i), flip)
		add("flipped checkpoint", 0, "ckpt", "ls", fp)
		add("flipped checkpoint load_state", 0, loader(fp))
		// A header length that claims the world.
		claim := append([]byte(nil), state...)
		binary.LittleEndian.PutUint64(claim, r.Uint64())
		add("header length claim", 0, "ckpt", "ls", write(fmt.Sprintf("claim%d.safetensors", i), claim))
	}

	// MIL text: random byte flips and truncations of a valid program.
	src := []byte(hugeConv)
	for i := 0; i < mutations; i++ {
		m := append([]byte(nil), src...)
		for k := 0; k < 1+r.IntN(6); k++ {
			m[r.IntN(len(m))] = "[](){}<>,=;\"0123456789-x "[r.IntN(25)]
		}
		add("mutated MIL", 0, "mil", "run", "--relaxed", write(fmt.Sprintf("m%d.mil", i), m))
		add("truncated MIL", 0, "mil", "check", write(fmt.Sprintf("t%d.mil", i), src[:r.IntN(len(src))]))
	}

	// .npy inputs with bad headers and sizes.
	for i, h := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2147483647, 2147483647), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }",
		"{'descr': '>f4', 'fortran_order': False, 'shape': (6,), }",
		"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,), }",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (" + strings.Repeat("(", 100000) + "), }",
	} {
		b := append([]byte("\x93NUMPY\x02\x00"), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(b[8:], uint32(len(h)))
		b = append(append(b, h...), make([]byte, 24)...)
		npyPath := write(fmt.Sprintf("bad%d.npy", i), b)
		add("bad npy header", 0, "mil", "run", "--relaxed", "--in", "x="+npyPath, write(fmt.Sprintf("relu%d.mil", i), []byte(reluMIL)))
	}
	return cases
}

// runHostileSetup runs anestar (a script, or a command and its arguments) to make a file a case needs.
func runHostileSetup(args ...string) (int, string) {
	cmd := runAsCommand(args...)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}
