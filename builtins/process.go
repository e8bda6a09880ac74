package builtins

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anestar/anestar/ckpt"
	"github.com/anestar/anestar/internal/proctime"
	metricsfile "github.com/anestar/anestar/metrics"

	"go.starlark.net/starlark"
)

// execError stops a script after process.exec handed the restart to Config.Exec.
type execError struct{ argv []string }

func (e *execError) Error() string { return fmt.Sprintf("process.exec: restarted with %q", e.argv) }
func (e *execError) Unwrap() error { return ErrExec }

func (s *session) processModule() *moduleDef {
	args := make(starlark.Tuple, len(s.cfg.Args))
	for i, a := range s.cfg.Args {
		args[i] = starlark.String(a)
	}
	argv := make(starlark.Tuple, len(s.cfg.Argv))
	for i, a := range s.cfg.Argv {
		argv[i] = starlark.String(a)
	}
	names := make([]string, 0, len(s.cfg.Params))
	for k := range s.cfg.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	overrides := make(starlark.Tuple, len(names))
	for i, k := range names {
		overrides[i] = starlark.String(k)
	}
	return &moduleDef{
		name: "process",
		doc: "The run itself: its parameters and arguments, restarting, clocks, progress reports and a metrics log. " +
			"`print` writes to the run's output (nothing with --quiet).",
		vals: valueMap{
			"args":      args,
			"argv":      argv,
			"script":    starlark.String(s.cfg.Script),
			"out_dir":   starlark.String(outDir(s.cfg.Script)),
			"resume":    starlark.Bool(s.cfg.Resume),
			"overrides": overrides,
			"seed":      starlark.MakeUint64(s.cfg.Seed),
			"quiet":     starlark.Bool(s.cfg.Quiet),
			"dry_run":   starlark.Bool(s.cfg.DryRun),
		},
		fns: []fnDef{
			{sig: "params()", doc: "The struct that params() returned, or None before the script called it.", fn: s.processParams},
			{sig: "write(text)", doc: "Writes text to the run's output as it is, without a newline: text that streams as it is made " +
				"(nothing with --quiet).", fn: s.processWrite},
			{sig: "log(*args)", doc: "Writes a line of the args (as print joins them) to standard error: what is not the run's " +
				"output, e.g. speed figures beside generated text (nothing with --quiet).", fn: s.processLog},
			{sig: "args", doc: "The positional arguments after the script name, a tuple of strings."},
			{sig: "argv", doc: "The command line process.exec restarts with, a tuple of strings."},
			{sig: "script", doc: "The path of the script being run, as given: for finding files that ship beside it " +
				"(paths in parameters are the user's, relative to the working directory)."},
			{sig: "out_dir", doc: "The run's own output folder, out/SCRIPT (SCRIPT the script's file name without .star) in " +
				"the working directory, as nanoGPT's out/: the default place of a script's checkpoint, metrics and cached files, " +
				"so that runs of different scripts never share a file. process.outputs creates it (and folders inside it) " +
				"when missing."},
			{sig: "resume", doc: "True when the run was started with --resume: continue from the checkpoint."},
			{sig: "given(name)", doc: "True when this run gives parameter name a value (--set, or an embedder's Config.Params): what a " +
				"script asks before it takes a value from elsewhere (a checkpoint's, a model file's header) instead of the default.", fn: s.processGiven},
			{sig: "overrides", doc: "The names of the parameters this run sets (--set KEY=VALUE), a sorted tuple of strings: " +
				"for telling an explicit setting from a default."},
			{sig: "seed", doc: "The seed of the run's random generator (--seed)."},
			{sig: "quiet", doc: "True with --quiet."},
			{sig: "dry_run", doc: "True under `anestar check`: ane.compile checks each program (types, shapes, weights) " +
				"but compiles nothing, and kernel.eval is an error. A script builds every kernel, then stops before " +
				"training when dry_run is True, so that a bad size is reported in a second."},
			{sig: "exec(flags = [])", doc: "Restarts this program with the same command line plus flags " +
				"(those not already on it), after waiting for async work: the cure for the ANE's per-process " +
				"compile limit. It does not return; the script stops. An error where the host cannot restart.", fn: s.processExec},
			{sig: "interrupted()", doc: "True once the run was asked to stop (the first Ctrl-C or SIGTERM): poll it at the end of " +
				"each step, and when it is True save the checkpoint and end; the command then exits with 130 (143 for SIGTERM) " +
				"and says where the checkpoint is. A second signal exits at once. A script that never calls it is stopped " +
				"at the signal, as if cancelled.", fn: s.processInterrupted},
			{sig: "outputs(**paths)", doc: "Declares the files the run writes, each named by what it is " +
				"(`process.outputs(checkpoint = P.ckpt, metrics = P.metrics, export = P.export)`; \"\" or None for none), " +
				"and checks them at once, also under `anestar check`: a missing folder is made (not under `anestar check`, which checks " +
				"that the nearest folder that exists is writable), the folder is writable and the path is not a folder. A checkpoint is also locked (PATH.lock holds the pid) for the whole run, across process.exec, so that a " +
				"second run on it fails at once naming the first.", fn: s.processOutputs},
			{sig: "relative_to(path, file)", doc: "path for recording in file, found again from any working directory: relative to " +
				"file's folder when it lies in that folder or below (so the two can move together), else absolute. A checkpoint " +
				"names its tokenizer this way; process.resolve(recorded, file) reverses it.", fn: s.processRelativeTo},
			{sig: "resolve(recorded, file)", doc: "A path recorded relative to the folder of file (process.relative_to), as a path " +
				"from the working directory; an absolute one unchanged.", fn: s.processResolve},
			{sig: "time()", doc: "Wall-clock time in seconds since the Unix epoch, a float.", fn: s.processTime},
			{sig: "memory()", doc: "The process's memory, a struct: rss (its resident set now), peak_rss (the most it has " +
				"held since it started, what `/usr/bin/time -v` reports as its maximum resident set size) and start_rss (its " +
				"resident set when the run began: the program, its runtime and libraries), all in bytes, 0 where not known (on Linux " +
				"they come from /proc/self/status, elsewhere rss is the peak, from getrusage); and gc_percent, the Go collector's " +
				"growth target (GOGC: the heap grows by this share of what survived the last collection before the next; 25 in " +
				"anestar, more while under 128 MB survive, so that the heap may grow by 32 MB; 100 by default in a program that embeds it; -1 when collection is off).", fn: s.processMemory},
			{sig: "clock()", doc: "Monotonic seconds since the run started, a float: for timing spans such as a step or a run (process.timers attributes time to phases).", fn: s.processClock},
			{sig: "cpu()", doc: "The CPU seconds the process has used since the run started, a float: all its threads, user and " +
				"system time, the kernels', the queues' and the BLAS's work alike; 0.0 where the platform does not say. Over a span, " +
				"its change over process.clock()'s is how many cores were busy on average (at most cpu.cores while anestar's own work " +
				"runs): a step that keeps fewer busy waits on serial work. Over spans under a second it is coarse: the " +
				"platform counts another thread's time when that thread is rescheduled or the clock ticks.", fn: s.processCPU},
			{sig: "timers(reset = False)", doc: "The script's time by phase since the run started or the last reset, a dict of seconds: " +
				"compile (building mil programs and ane.compile), ane (kernel evals), io (surface reads, writes and copies), " +
				"host (tensor, cpu and optimizer math, submitting queue jobs) and wait (queue waits). Every call of those builtins " +
				"adds to its phase; work a queue does beside the script does not. With reset the totals restart at zero after they are read.", fn: s.processTimers},
			{sig: "progress(total, every = 5.0, label = \"step\", delay = 0.0)", doc: "A progress report for a loop of total steps (0 when not known): " +
				"call `p.update(step, loss = ...)` each step and `p.done()` after the loop. On a terminal it redraws one " +
				"line; elsewhere it prints a line at most every `every` seconds. label names what is counted (`window 12/661 ... ms/window`); " +
				"with delay, nothing is shown until that many seconds after the first update (a phase that may be quick stays silent). " +
				"See the progress type.", fn: s.processProgress},
			{sig: "metrics(path, append = None, resume_from = None)", doc: "Opens path for JSON lines and returns a metrics writer; " +
				"it is closed when the run ends. resume_from is the step a resumed run restored (ckpt.load_state's step), None for a " +
				"run that restored none. With append None (the default) a resumed run (--resume, or resume_from given) appends and a " +
				"fresh run starts the file anew, so a file never holds a step twice; True or False forces one. " +
				"Appending first repairs a last line that a crash left half written, then drops the lines after resume_from " +
				"(a killed run wrote them after its checkpoint): a record's `step` is the steps done, " +
				"the counter the checkpoint records, so the records up to and including it are kept. A write that fails (a full " +
				"disk) prints one warning and turns the log off; the training goes on.", fn: s.processMetrics},
		},
	}
}

func (s *session) processWrite(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text); err != nil {
		return nil, err
	}
	io.WriteString(s.out, text)
	return starlark.None, nil
}

func (s *session) processLog(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(kwargs) > 0 {
		return nil, fmt.Errorf("%s: unexpected keyword argument %s", b.Name(), kwargs[0][0])
	}
	parts := make([]string, len(args))
	for i, a := range args {
		if str, ok := starlark.AsString(a); ok {
			parts[i] = str
		} else {
			parts[i] = a.String()
		}
	}
	s.errw.println(strings.Join(parts, " "))
	return starlark.None, nil
}

func (s *session) processParams(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if s.params == nil {
		return starlark.None, nil
	}
	return s.params.struct_, nil
}

func (s *session) processExec(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var flags starlark.Iterable = starlark.NewList(nil)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "flags?", &flags); err != nil {
		return nil, err
	}
	var add []string
	it := flags.Iterate()
	defer it.Done()
	var v starlark.Value
	for i := 0; it.Next(&v); i++ {
		f, ok := starlark.AsString(v)
		if !ok {
			return nil, nameErrf(b.Name(), "flags[%d]: got %s, want string", i, v.Type())
		}
		add = append(add, f)
	}
	argv, err := mergeFlags(s.cfg.Argv, add)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if s.cfg.Stop != nil && s.cfg.Stop.Requested() {
		return nil, nameErrf(b.Name(), "%w: not restarting (the checkpoint saved before this call resumes it)", ErrInterrupted)
	}
	if s.cfg.DryRun {
		return nil, nameErrf(b.Name(), "dry run: a dry run does not restart; stop before restarting when process.dry_run is True")
	}
	if s.cfg.Exec == nil {
		return nil, nameErrf(b.Name(), "this host cannot restart the program")
	}
	for _, q := range s.queues {
		if err := q.wait(b.Name()); err != nil {
			return nil, err
		}
	}
	if err := ckpt.InheritLocks(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := s.cfg.Exec(argv); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return nil, &execError{argv: argv}
}

// mergeFlags returns argv with flags added: a flag already on argv is not repeated, and a
// "--set KEY=VALUE" pair (or "--set=KEY=VALUE") replaces any setting of KEY on argv, so that
// process.exec(["--set", "b=3"]) after a user's --set a=5 keeps both.
func mergeFlags(argv, flags []string) ([]string, error) {
	out := slices.Clone(argv)
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		setting, isSet := strings.CutPrefix(f, "--set=")
		if f == "--set" {
			if i+1 == len(flags) {
				return nil, fmt.Errorf("flags end with --set: want \"--set\", \"KEY=VALUE\"")
			}
			i++
			setting, isSet = flags[i], true
		}
		if !isSet {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
			continue
		}
		key, _, ok := strings.Cut(setting, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("--set %q: want KEY=VALUE", setting)
		}
		out = dropSetting(out, key)
		out = append(out, "--set", setting)
	}
	return out, nil
}

// dropSetting removes every --set of key from argv (both "--set K=V" and "--set=K=V").
func dropSetting(argv []string, key string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if a == "--set" && i+1 < len(argv) && strings.HasPrefix(argv[i+1], key+"=") {
			i++
			continue
		}
		if strings.HasPrefix(a, "--set="+key+"=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

func (s *session) processTime(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return starlark.Float(float64(time.Now().UnixNano()) / 1e9), nil
}

func (s *session) processClock(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return starlark.Float(time.Since(s.start).Seconds()), nil
}

func (s *session) processCPU(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	c, ok := proctime.CPU()
	if !ok {
		return starlark.Float(0), nil
	}
	return starlark.Float((c - s.startCPU).Seconds()), nil
}

// metrics writes JSON lines to a file through package metrics.
type metrics struct {
	path   string
	w      *metricsfile.Writer
	closed bool
	failed bool      // a write failed: the log is off for the rest of the run
	warn   io.Writer // where the one warning goes
}

var metricsType = &typeDef{
	name: "metrics",
	doc:  "A JSON-lines log opened by process.metrics; each line is written and flushed at once, so a crash loses nothing written.",
	members: []fnDef{
		{sig: "path", doc: "The file's path."},
		{sig: "write(record = None, **fields)", doc: "Appends one line: the JSON object (keys sorted) of record, a dict, updated with fields.", fn: metricsWrite},
		{sig: "close()", doc: "Closes the file; later writes are errors.", fn: metricsClose},
	},
}

var metricsMethods = newMethodSet(metricsType)

var _ starlark.HasAttrs = (*metrics)(nil)

func (m *metrics) String() string        { return fmt.Sprintf("metrics(%q)", m.path) }
func (m *metrics) Type() string          { return "metrics" }
func (m *metrics) Freeze()               {}
func (m *metrics) Truth() starlark.Bool  { return true }
func (m *metrics) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: metrics") }
func (m *metrics) AttrNames() []string   { return metricsMethods.names }
func (m *metrics) Attr(name string) (starlark.Value, error) {
	if name == "path" {
		return starlark.String(m.path), nil
	}
	return metricsMethods.bind(m, name), nil
}
func (m *metrics) Close() error {
	if m.closed {
		return nil
	}
	m.closed = true
	return m.w.Close()
}

func (s *session) processMetrics(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var appendArg, fromArg starlark.Value = starlark.None, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "append?", &appendArg, "resume_from?", &fromArg); err != nil {
		return nil, err
	}
	from := int64(-1) // the step the run resumed from, -1 for none
	if fromArg != starlark.None {
		n, ok := fromArg.(starlark.Int)
		v, exact := n.Int64()
		if !ok || !exact || v < 0 {
			return nil, nameErrf(b.Name(), "resume_from must be None or a step (an int, 0 or more: ckpt.load_state's step), not %s %s", fromArg.Type(), fromArg)
		}
		from = v
	}
	appendMode := s.cfg.Resume || from >= 0
	switch v := appendArg.(type) {
	case starlark.NoneType:
	case starlark.Bool:
		appendMode = bool(v)
	default:
		return nil, nameErrf(b.Name(), "append must be None, True or False, not %s", appendArg.Type())
	}
	if err := s.refuseScript(path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if !s.cfg.DryRun { // two runs appending to one file would interleave their steps
		if err := s.lockOutput(path); err != nil {
			return nil, nameErr(b.Name(), err)
		}
	}
	w, err := metricsfile.Open(path, appendMode)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if appendMode && from >= 0 {
		// A record's step counts the steps done, as the checkpoint's step does: records up to the
		// restored step are the checkpoint's; later ones a killed run wrote, and the resumed run redoes.
		if _, err := w.DropFrom("step", from+1); err != nil {
			w.Close()
			return nil, nameErr(b.Name(), err)
		}
	}
	m := &metrics{path: path, w: w, warn: s.warnWriter()}
	s.addCloser(m)
	return m, nil
}

func metricsWrite(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	m := b.Receiver().(*metrics)
	var record *starlark.Dict
	if err := starlark.UnpackPositionalArgs(b.Name(), args, nil, 0, &record); err != nil {
		return nil, err
	}
	d := starlark.NewDict(len(kwargs))
	if record != nil {
		for _, kv := range record.Items() {
			d.SetKey(kv[0], kv[1])
		}
	}
	for _, kv := range kwargs {
		d.SetKey(kv[0], kv[1])
	}
	if m.closed {
		return nil, nameErrf(b.Name(), "%s is closed", m)
	}
	fields := make(map[string]any, d.Len())
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok {
			return nil, nameErrf(b.Name(), "keys must be strings, not %s", kv[0].Type())
		}
		v, err := toJSONValue(kv[1])
		if err != nil {
			return nil, nameErrf(b.Name(), "%s: %w", string(k), err)
		}
		fields[string(k)] = v
	}
	if m.failed {
		return starlark.None, nil
	}
	if err := m.w.Write(fields); err != nil {
		// Metrics are secondary: a full disk must not end the training (or its checkpoints).
		m.failed = true
		fmt.Fprintf(m.warn, "warning: %s: %v; no more metrics are written to it, training goes on\n", b.Name(), err)
	}
	return starlark.None, nil
}

// toJSONValue converts a Starlark value to the Go value package metrics encodes.
func toJSONValue(v starlark.Value) (any, error) {
	switch v := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(v), nil
	case starlark.Int:
		i, ok := v.Int64()
		if !ok {
			return nil, fmt.Errorf("integer %s is too large", v)
		}
		return i, nil
	case starlark.Float:
		return float64(v), nil
	case starlark.String:
		return string(v), nil
	case starlark.Indexable: // list, tuple
		out := make([]any, v.Len())
		for i := range out {
			e, err := toJSONValue(v.Index(i))
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case *starlark.Dict:
		out := make(map[string]any, v.Len())
		for _, kv := range v.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("keys must be strings, not %s", kv[0].Type())
			}
			e, err := toJSONValue(kv[1])
			if err != nil {
				return nil, err
			}
			out[string(k)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot write a %s as JSON", v.Type())
}

func metricsClose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := b.Receiver().(*metrics).Close(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func (s *session) processRelativeTo(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path, file string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "file", &file); err != nil {
		return nil, err
	}
	if path == "" {
		return starlark.String(path), nil
	}
	base, err := filepath.Abs(filepath.Dir(file))
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	rel, err := filepath.Rel(base, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return starlark.String(abs), nil // outside file's folder: recorded whole
	}
	return starlark.String(filepath.ToSlash(rel)), nil
}

func (s *session) processResolve(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var recorded, file string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "recorded", &recorded, "file", &file); err != nil {
		return nil, err
	}
	if recorded == "" || filepath.IsAbs(recorded) {
		return starlark.String(recorded), nil
	}
	return starlark.String(filepath.Join(filepath.Dir(file), filepath.FromSlash(recorded))), nil
}

func (s *session) processGiven(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name); err != nil {
		return nil, err
	}
	_, ok := s.cfg.Params[name]
	return starlark.Bool(ok), nil
}
