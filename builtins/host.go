package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/internal/memlimit"
	"github.com/anestar/anestar/internal/proctime"
	"github.com/anestar/anestar/internal/safefile"
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
	Settings    ane.Settings // settings for opening BackendName (--fp32, --check-numerics, --relaxed, --chip)

	Params map[string]string // parameter overrides, KEY -> Starlark literal (see ParseSet)
	Args   []string          // positional script arguments, process.args
	Resume bool              // process.resume: the script should continue from its checkpoint
	Seed   uint64            // seed of the run's random generator

	Stdout   io.Writer // where print and progress lines go; nil discards them
	Stderr   io.Writer // where process.log lines go (what is not the run's output); nil discards them
	Quiet    bool      // process.quiet; print and progress output are discarded
	Terminal bool      // Stdout is a terminal: progress redraws one line in place
	DryRun   bool      // process.dry_run: ane.compile checks programs but compiles nothing (see CheckedProgram)

	// Argv is the command line that process.exec restarts with (without the program name).
	Argv []string
	// Exec replaces the process with argv (the same program); it returns only on failure. When nil,
	// process.exec is an error. If it returns nil (a test's recorder), the run stops and Result.Exec
	// holds argv.
	Exec func(argv []string) error

	// Stop, when set, lets the host ask the script to stop at a safe point (process.interrupted).
	Stop *Stop
	// Warn receives warnings that do not stop the run (a metrics file that cannot be written);
	// when nil they go to Stdout.
	Warn io.Writer

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
	// Checkpoint is the path of the last training state ckpt.save_state wrote (or else the one
	// ckpt.load_state restored), "" for none, and CheckpointStep the step it holds.
	Checkpoint     string
	CheckpointStep int64
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
	cfg      *Config
	ctx      context.Context
	out      *lineWriter
	errw     *lineWriter // process.log lines: Config.Stderr
	rng      *rng
	start    time.Time
	loads    map[string]*loadEntry      // by absolute path
	params   *paramSet                  // declared by params(), nil before
	argsRead atomic.Bool                // the script read process.args (else positional arguments did nothing)
	taken    map[string]json.RawMessage // parameters the script took from the checkpoint it resumed (ckpt.load_state taken): recorded as theirs
	backend  ane.Backend                // opened on first use
	queues   []*queue                   // every queue made, drained at the end
	closers  []io.Closer                // files to close at the end
	kernels  []ane.Kernel               // every kernel compiled, closed at the end
	started  sync.WaitGroup             // the evals binding.start() began, waited for at the end
	checked  []CheckedProgram           // programs checked by a dry run
	bindings []*binding                 // the kernels' and bindings' surfaces open (ane.memory), closed ones dropped now and then
	startRSS uint64                     // the process's resident bytes when the run began (process.memory)
	startCPU time.Duration              // the process's CPU time when the run began (process.cpu)
	now      func() time.Time           // the clock of progress reports; time.Now unless a test sets it

	timers     timers                    // the phase totals of process.timers()
	progresses []*progress               // every progress report made, ended at the end
	locks      map[string]*ckpt.PathLock // checkpoint locks held, by absolute path
	saved      string                    // the last checkpoint ckpt.save_state wrote
	savedStep  int64                     // its step
	// savedOnce holds the absolute paths of the checkpoints saved in this run (see prepareSave).
	savedOnce map[string]bool
	mu        sync.Mutex // guards closers against concurrent appends (queues run elsewhere)

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
		errw:  &lineWriter{w: cfg.Stderr},
		now:   time.Now,
		rng:   newRNG(cfg.Seed),
		start: time.Now(),
		loads: map[string]*loadEntry{},
	}
	s.startRSS, _, _ = memlimit.Resident()
	s.startCPU, _ = proctime.CPU()
	if cfg.now != nil {
		s.now = cfg.now
	}
	if cfg.Stdout == nil || cfg.Quiet {
		s.out.w = io.Discard
	}
	if cfg.Stderr == nil || cfg.Quiet {
		s.errw.w = io.Discard
	}
	s.backend = cfg.Backend
	s.predeclared = s.makePredeclared()
	defer s.finish()

	if _, err := ane.ParseChip(cfg.Settings.Chip); err != nil {
		return &Result{}, fmt.Errorf("--chip: %w", err)
	}
	src := cfg.Source
	if src == nil {
		b, err := readFile(cfg.Script)
		if err != nil {
			return &Result{}, err
		}
		src = b
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
	res := &Result{Globals: globals, Checked: s.checked, Checkpoint: s.saved, CheckpointStep: s.savedStep}
	if s.params != nil {
		res.Params = s.params.list
	}
	var ex *execError
	if errors.As(err, &ex) {
		res.Exec = ex.argv
		return res, nil
	}
	if err != nil && ctx.Err() != nil {
		return res, fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if err == nil && len(cfg.Params) > 0 && s.params == nil {
		return res, fmt.Errorf("%s: parameters were set (%s) but the script declares none with params()", cfg.Script, strings.Join(sortedKeys(cfg.Params), ", "))
	}
	if err == nil && len(cfg.Args) > 0 && !s.argsRead.Load() {
		fmt.Fprintf(s.warnWriter(), "anestar: warning: %s never read process.args: the arguments %q did nothing (a parameter is --set KEY=VALUE)\n", cfg.Script, cfg.Args)
	}
	return res, err
}

// watchedModule is a module that reports which of its members a script reads.
type watchedModule struct {
	*starlarkstruct.Module
	read func(name string)
}

// Attr reports the read and returns the member.
func (m *watchedModule) Attr(name string) (starlark.Value, error) {
	m.read(name)
	return m.Module.Attr(name)
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
	th.SetLocal(sessionKey, s)
	return th
}

// makePredeclared builds the global names every script and loaded file sees.
func (s *session) makePredeclared() starlark.StringDict {
	d := starlark.StringDict{
		"fail":    starlark.NewBuiltin("fail", fail),
		"params":  starlark.NewBuiltin("params", s.paramsBuiltin),
		"sprintf": starlark.NewBuiltin("sprintf", sprintf),
		"struct":  starlark.NewBuiltin("struct", starlarkstruct.Make),
		"math":    starmath.Module,
		"json":    jsonModule,
	}
	for _, m := range s.modules() {
		d[m.name] = m.module()
	}
	d["process"] = &watchedModule{Module: d["process"].(*starlarkstruct.Module), read: func(name string) {
		if name == "args" {
			s.argsRead.Store(true)
		}
	}}
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
		return nameErr(fn, err)
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
	s.unwaited()
	s.started.Wait()
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
	s.unlockAll()
}

// warnWriter returns where warnings go: Config.Warn, else the run's output.
func (s *session) warnWriter() io.Writer {
	if s.cfg.Warn != nil {
		return s.cfg.Warn
	}
	return s.out
}

// getBackend returns the run's backend, opening it on first use.
func (s *session) getBackend(fn string) (ane.Backend, error) {
	if s.backend == nil {
		b, err := ane.Open(s.cfg.BackendName, s.cfg.Settings)
		if err != nil {
			return nil, nameErr(fn, err)
		}
		s.backend = b
	}
	return s.backend, nil
}

// maxScript bounds a script file's size: Starlark source far beyond any real script is a mistake.
const maxScript = 64 << 20

// readFile reads a script file: a regular file, of at most maxScript bytes.
func readFile(name string) ([]byte, error) { return safefile.ReadFile(name, maxScript) }
