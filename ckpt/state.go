package ckpt

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Names of the training-state convention (see the package documentation).
const (
	ParamPrefix   = "param/"     // tensor param/NAME: the weights of parameter NAME
	OptimPrefix   = "optim/"     // tensor optim/NAME/SLOT: optimizer slot SLOT (m, v, ...) of parameter NAME
	CounterPrefix = "state/"     // tensor state/NAME: an I64 scalar counter (step, data position, ...)
	RNGPrefix     = "rng/"       // tensor rng/NAME: a U8 vector holding a random generator's state
	TimePrefix    = "time/"      // metadata time/NAME: accumulated seconds, a float64 in Go syntax
	ParamsKey     = "params"     // metadata params: the script's parameters as JSON
	StructKey     = "structural" // metadata structural: the names of the parameters that fix the state's layout, as a JSON list
	FormatKey     = "format"     // metadata format: FormatVersion
	FormatVersion = "anestar-train/1"
)

// State is the training state of a run, as the scripts save and restore it: enough for a
// resumed run to continue bit-identically. File and StateFromFile map it to and from the
// naming convention.
type State struct {
	Params   map[string]Tensor            // weights by parameter name
	Optim    map[string]map[string]Tensor // optimizer slots by parameter name, then slot name
	Counters map[string]int64             // exact integer counters such as "step" and "data_pos"
	RNG      map[string][]byte            // random generators' states, byte for byte
	Times    map[string]float64           // accumulated wall times in seconds by phase
	Config   string                       // the script's parameters as JSON, metadata "params" ("" for none)
	// Structural names the parameters whose change makes the state unusable (sizes, layer
	// counts): a resumed run compares them with its own; metadata "structural".
	Structural []string
	Meta       map[string]string // any other metadata (keys must not collide with the above)
}

// File returns the checkpoint content for s. The tensors share memory with s.
func (s *State) File() (*File, error) {
	f := &File{Tensors: map[string]Tensor{}, Metadata: map[string]string{FormatKey: FormatVersion}}
	add := func(name string, t Tensor) error {
		if _, dup := f.Tensors[name]; dup {
			return fmt.Errorf("ckpt: state: tensor %q named twice", name)
		}
		f.Tensors[name] = t
		return nil
	}
	for name, t := range s.Params {
		if name == "" {
			return nil, fmt.Errorf("ckpt: state: empty parameter name")
		}
		if err := add(ParamPrefix+name, t); err != nil {
			return nil, err
		}
	}
	for name, slots := range s.Optim {
		for slot, t := range slots {
			if name == "" || slot == "" || strings.Contains(slot, "/") {
				return nil, fmt.Errorf("ckpt: state: bad optimizer slot %q of parameter %q (names must be non-empty, slots without '/')", slot, name)
			}
			if err := add(OptimPrefix+name+"/"+slot, t); err != nil {
				return nil, err
			}
		}
	}
	for name, v := range s.Counters {
		t, _ := FromInt64([]int{}, []int64{v})
		if err := add(CounterPrefix+name, t); err != nil {
			return nil, err
		}
	}
	for name, b := range s.RNG {
		if err := add(RNGPrefix+name, Tensor{DType: U8, Shape: []int{len(b)}, Data: b}); err != nil {
			return nil, err
		}
	}
	for name, v := range s.Times {
		f.Metadata[TimePrefix+name] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if s.Config != "" {
		f.Metadata[ParamsKey] = s.Config
	}
	if s.Structural != nil {
		b, _ := json.Marshal(s.Structural)
		f.Metadata[StructKey] = string(b)
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	for k, v := range s.Meta {
		if k == FormatKey || k == ParamsKey || k == StructKey || k == ChecksumKey || strings.HasPrefix(k, TimePrefix) {
			return nil, fmt.Errorf("ckpt: state: metadata key %q is reserved", k)
		}
		f.Metadata[k] = v
	}
	return f, nil
}

// StateFromFile splits a checkpoint that follows the convention into a State. A tensor or
// metadata entry that breaks the convention is an error, so that nothing is silently dropped.
// The tensors share memory with f.
func StateFromFile(f *File) (*State, error) {
	s := &State{
		Params:   map[string]Tensor{},
		Optim:    map[string]map[string]Tensor{},
		Counters: map[string]int64{},
		RNG:      map[string][]byte{},
		Times:    map[string]float64{},
		Meta:     map[string]string{},
	}
	if v, ok := f.Metadata[FormatKey]; ok && v != FormatVersion {
		return nil, fmt.Errorf("ckpt: state: format %q, want %q", v, FormatVersion)
	}
	names := make([]string, 0, len(f.Tensors))
	for name := range f.Tensors {
		names = append(names, name)
	}
	sort.Strings(names) // report the first offender deterministically
	for _, name := range names {
		t := f.Tensors[name]
		switch {
		case strings.HasPrefix(name, ParamPrefix) && len(name) > len(ParamPrefix):
			s.Params[name[len(ParamPrefix):]] = t
		case strings.HasPrefix(name, OptimPrefix):
			rest := name[len(OptimPrefix):]
			i := strings.LastIndexByte(rest, '/')
			if i <= 0 || i == len(rest)-1 {
				return nil, fmt.Errorf("ckpt: state: tensor %q: want %sNAME/SLOT", name, OptimPrefix)
			}
			p, slot := rest[:i], rest[i+1:]
			if s.Optim[p] == nil {
				s.Optim[p] = map[string]Tensor{}
			}
			s.Optim[p][slot] = t
		case strings.HasPrefix(name, CounterPrefix):
			v, err := t.Int64()
			if err != nil || len(t.Shape) != 0 {
				return nil, fmt.Errorf("ckpt: state: counter %q must be an I64 scalar, is %v%v", name, t.DType, t.Shape)
			}
			s.Counters[name[len(CounterPrefix):]] = v[0]
		case strings.HasPrefix(name, RNGPrefix):
			if t.DType != U8 || len(t.Shape) != 1 {
				return nil, fmt.Errorf("ckpt: state: generator state %q must be a U8 vector, is %v%v", name, t.DType, t.Shape)
			}
			s.RNG[name[len(RNGPrefix):]] = t.Data
		default:
			return nil, fmt.Errorf("ckpt: state: tensor %q follows no naming convention (%s, %s, %s, %s)", name, ParamPrefix, OptimPrefix, CounterPrefix, RNGPrefix)
		}
	}
	for k, v := range f.Metadata {
		switch {
		case k == FormatKey:
		case k == ParamsKey:
			s.Config = v
		case k == StructKey:
			if err := json.Unmarshal([]byte(v), &s.Structural); err != nil {
				return nil, fmt.Errorf("ckpt: state: metadata %q: %q is not a JSON list of names", k, v)
			}
		case strings.HasPrefix(k, TimePrefix):
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("ckpt: state: metadata %q: %q is not a number", k, v)
			}
			s.Times[k[len(TimePrefix):]] = x
		default:
			s.Meta[k] = v
		}
	}
	if err := s.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxCounter bounds the counters of a State: a step or position beyond it (about 9e15, where
// float64 stops counting exactly) is taken for a corrupt or forged file.
const MaxCounter = 1 << 53

// validate checks the values of s: counters in [0, MaxCounter], times finite and not negative,
// the parameters a JSON object and the structural names among them.
func (s *State) validate() error {
	for _, name := range slices.Sorted(maps.Keys(s.Counters)) {
		if v := s.Counters[name]; v < 0 || v > MaxCounter {
			return fmt.Errorf("ckpt: state: counter %s%s = %d: want 0 to %d", CounterPrefix, name, v, int64(MaxCounter))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Times)) {
		if v := s.Times[name]; v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("ckpt: state: metadata %s%s = %v: want a non-negative number of seconds", TimePrefix, name, v)
		}
	}
	var params map[string]json.RawMessage
	if s.Config != "" {
		if err := json.Unmarshal([]byte(s.Config), &params); err != nil {
			return fmt.Errorf("ckpt: state: metadata %q is not a JSON object: %w", ParamsKey, err)
		}
	}
	for _, name := range s.Structural {
		if _, ok := params[name]; !ok {
			return fmt.Errorf("ckpt: state: structural parameter %q is not among the recorded parameters", name)
		}
	}
	return nil
}

// SaveState saves s to path with Save.
func SaveState(path string, s *State, opts SaveOptions) error {
	f, err := s.File()
	if err != nil {
		return err
	}
	return Save(path, f, opts)
}

// LoadState loads the checkpoint at path with Load and splits it with StateFromFile.
func LoadState(path string) (*State, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	s, err := StateFromFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}
