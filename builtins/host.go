package builtins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anestar/anestar/ane"
	"go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Config says what to run and with what. Only Script is required.
type Config struct {
	Script string // path of the script; load() paths are relative to the loading file's folder
	Source []byte // the script's text; when nil it is read from Script

	Backend     ane.Backend  // the backend kernels run on; when nil, BackendName is opened on first use
	BackendName string       // registry name for ane.Open: "auto" (or ""), "ane", "emulator"
	Settings    ane.Settings // settings for opening BackendName (--fp32, --check-numerics, --relaxed)

	Params map[string]string // parameter overrides, KEY -> Starlark literal (see ParseSet)
	Args   []string          // positional script arguments, process.args
	Resume bool              // process.resume: the script should continue from its checkpoint
	Seed   uint64            // seed of the run's random generator

	Stdout   io.Writer // where print and progress lines go; nil discards them
	Quiet    bool      // process.quiet; print and progress output are discarded
	Terminal bool      // Stdout is a terminal: progress redraws one line in place
	DryRun   bool      // process.dry_run: ane.compile checks programs but compiles nothing (see CheckedProgram)

	// Argv is the command line that process.exec restarts with (without the program name).
	Argv []string
	// Exec replaces the process with argv (the same program); it returns only on failure. When nil,
	// process.exec is an error. If it returns nil (a test's recorder), the run stops and Result.Exec
	// holds argv.
	Exec func(argv []string) error

	Builtins starlark.StringDict            // extra predeclared names, added to (and overriding) the modules
	Modules  map[string]starlark.StringDict // extra modules for load(name, ...), by exact name
	// Setup, when set, is called with the script's thread before it starts, e.g. to set the
	// thread-locals that extra builtins use.
	Setup func(thread *starlark.Thread)

	now func() time.Time // the clock of progress reports; time.Now when nil (tests set it)
}

// Result is what a finished run leaves.
type Result struct {
	Globals starlark.StringDict // the script's global names
	Params  []Param             // the parameters the script declared, with the values used
	Exec    []string            // non-nil when the script called process.exec and Config.Exec returned
	Checked []CheckedProgram    // in a dry run, the programs ane.compile checked, in call order
}

// ErrExec is wrapped by the error that stops a script after process.exec.
var ErrExec = errors.New("process.exec")

// FileOptions are the Starlark dialect of scripts: while loops, top-level if/for/while and global
// reassignment are allowed, recursion is not, and set() exists.
var FileOptions = &syntax.FileOptions{
	Set:             true,
	While:           true,
	TopLevelControl: true,
	GlobalReassign:  true,
}

// session is the state of one run: what builtins share across a script and the files it loads.
type session struct {
	cfg     *Config
	ctx     context.Context
	out     *lineWriter
	rng     *rng
	start   time.Time
	loads   map[string]*loadEntry // by absolute path
	params  *paramSet             // declared by params(), nil before
	backend ane.Backend           // opened on first use
	queues  []*queue              // every queue made, drained at the end
	closers []io.Closer           // files to close at the end
	kernels []ane.Kernel          // every kernel compiled, closed at the end
	checked []CheckedProgram      // programs checked by a dry run
	now     func() time.Time      // the clock of progress reports; time.Now unless a test sets it

	progresses []*progress // every progress report made, ended at the end
	mu         sync.Mutex  // guards closers against concurrent appends (queues run elsewhere)

	predeclared starlark.StringDict
}

// Run executes cfg.Script to the end, or until ctx is cancelled (the script stops at the next
// builtin boundary with an error wrapping ctx.Err()). Script errors carry the Starlark backtrace
// (see *starlark.EvalError). Run waits for all async work to finish and closes every kernel and file
// the script opened before it returns.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	s := &session{
		cfg:   &cfg,
		ctx:   ctx,
		out:   &lineWriter{w: cfg.Stdout},
		now:   time.Now,
		rng:   newRNG(cfg.Seed),
		start: time.Now(),
		loads: map[string]*loadEntry{},
	}
	if cfg.now != nil {
		s.now = cfg.now
	}
	if cfg.Stdout == nil || cfg.Quiet {
		s.out.w = io.Discard
	}
	s.backend = cfg.Backend
	s.predeclared = s.makePredeclared()
	defer s.finish()

	src := any(nil)
	if cfg.Source != nil {
		src = cfg.Source
	}
	thread := s.newThread("main")
	if cfg.Setup != nil {
		cfg.Setup(thread)
	}
	stop := context.AfterFunc(ctx, func() { thread.Cancel(ctx.Err().Error()) })
	defer stop()

	globals, err := starlark.ExecFileOptions(FileOptions, thread, cfg.Script, src, s.predeclared)
	if qerr := s.drain(); err == nil {
		err = qerr
	}
	res := &Result{Globals: globals, Checked: s.checked}
	if s.params != nil {
		res.Params = s.params.list
	}
	var ex *execError
	if errors.As(err, &ex) {
		res.Exec = ex.argv
		return res, nil
	}
	if err != nil && ctx.Err() != nil {
		return res, fmt.Errorf("%w: %v", ctx.Err(), err)
	}
	if err == nil && len(cfg.Params) > 0 && s.params == nil {
		return res, fmt.Errorf("%s: parameters were set (%s) but the script declares none with params()", cfg.Script, strings.Join(sortedKeys(cfg.Params), ", "))
	}
	return res, err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func (s *session) newThread(name string) *starlark.Thread {
	th := &starlark.Thread{
		Name:  name,
		Print: func(_ *starlark.Thread, msg string) { s.out.println(msg) },
		Load:  s.load,
	}
	return th
}

// makePredeclared builds the global names every script and loaded file sees.
func (s *session) makePredeclared() starlark.StringDict {
	d := starlark.StringDict{
		"params": starlark.NewBuiltin("params", s.paramsBuiltin),
		"struct": starlark.NewBuiltin("struct", starlarkstruct.Make),
		"math":   starmath.Module,
		"json":   json.Module,
	}
	for _, m := range s.modules() {
		d[m.name] = m.module()
	}
	for k, v := range s.cfg.Builtins {
		d[k] = v
	}
	return d
}

// modules returns the definitions of the builtin modules, in reference order.
func (s *session) modules() []*moduleDef {
	return []*moduleDef{
		s.milModule(),
		s.aneModule(),
		s.tensorModule(),
		s.cpuModule(),
		s.optimModule(),
		s.ckptModule(),
		s.tokenizerModule(),
		s.processModule(),
	}
}

// check returns ctx's error once the run is cancelled; long builtins call it between pieces of work.
func (s *session) check(fn string) error {
	if err := s.ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", fn, err)
	}
	return nil
}

// addCloser registers a file to close when the run ends.
func (s *session) addCloser(c io.Closer) {
	s.mu.Lock()
	s.closers = append(s.closers, c)
	s.mu.Unlock()
}

// drain waits for every queue to finish its work and returns the first queued error.
func (s *session) drain() error {
	var first error
	for _, q := range s.queues {
		if err := q.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// finish releases what the run opened.
func (s *session) finish() {
	s.drain()
	for _, k := range s.kernels {
		k.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.progresses {
		p.p.Done()
	}
	s.out.endLine()
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i].Close()
	}
}

// getBackend returns the run's backend, opening it on first use.
func (s *session) getBackend(fn string) (ane.Backend, error) {
	if s.backend == nil {
		b, err := ane.Open(s.cfg.BackendName, s.cfg.Settings)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", fn, err)
		}
		s.backend = b
	}
	return s.backend, nil
}

// readFile reads a script file.
func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
