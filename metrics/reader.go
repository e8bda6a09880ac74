package metrics

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/anestar/anestar/internal/safefile"
	"io"
	"strconv"
)

// maxReported is how many malformed lines an error from Parse lists.
const maxReported = 10

// Series is the contents of one metrics file.
type Series struct {
	Path    string   // file name as given to Read or Parse
	Records []Record // in order of first appearance of their step (or epoch)

	// Superseded counts lines that repeated the step (or, for records without a
	// step, the epoch) of an earlier line and replaced at least one of its values.
	// A later line is merged into the earlier record: its values win, keys new to
	// the record are added, and the record keeps its place. A run that restarts from
	// a checkpoint and appends to the same file produces such lines; lines that
	// only add keys to a step (an evaluation logged after the training line of the
	// same step) are merged without counting.
	Superseded int

	// Truncated is the line number of an incomplete last line (no newline, not a
	// valid record) that was dropped, or 0. A crash in the middle of a write leaves
	// such a line; Open in append mode removes it.
	Truncated int
}

// Read reads the metrics file at path; see [Parse].
func Read(path string) (*Series, error) {
	f, _, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads JSON lines from r; name is used in messages and as Series.Path.
// Blank lines are allowed. Every other line must be a JSON object, else Parse
// returns an error listing the malformed lines as name:line:col (each a
// *[LineError], joined with errors.Join); only an incomplete last line is
// tolerated (see [Series.Truncated]).
func Parse(r io.Reader, name string) (*Series, error) {
	s := &Series{Path: name}
	br := bufio.NewReader(r)
	index := map[string]int{} // step or epoch key -> position in s.Records
	var errs []error
	bad := 0
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("metrics: %s:%d: %w", name, n, err)
		}
		complete := err == nil
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec, perr := parseLine(line)
		if perr != nil {
			if !complete {
				s.Truncated = n
				break
			}
			bad++
			if len(errs) < maxReported {
				le := perr.(*LineError)
				le.Path, le.Line = name, n
				errs = append(errs, le)
			}
			continue
		}
		rec.Line = n
		s.add(rec, index)
	}
	if bad > len(errs) {
		errs = append(errs, fmt.Errorf("%s: %d more malformed lines", name, bad-len(errs)))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// add appends rec, or merges it into the earlier record with the same step/epoch.
func (s *Series) add(rec Record, index map[string]int) {
	id := ""
	if v, ok := rec.Number("step"); ok {
		id = "step " + strconv.FormatFloat(v, 'g', -1, 64)
	} else if v, ok := rec.Number("epoch"); ok {
		id = "epoch " + strconv.FormatFloat(v, 'g', -1, 64)
	}
	if id == "" {
		s.Records = append(s.Records, rec)
		return
	}
	i, seen := index[id]
	if !seen {
		index[id] = len(s.Records)
		s.Records = append(s.Records, rec)
		return
	}
	old := &s.Records[i]
	replaced := false
	for _, k := range rec.Keys {
		if _, ok := old.Values[k]; !ok {
			old.Keys = append(old.Keys, k)
		} else if k != "step" && k != "epoch" {
			replaced = true // the step and epoch themselves repeat by definition
		}
		old.Values[k] = rec.Values[k]
	}
	if replaced {
		s.Superseded++
	}
}

// Keys returns every key that appears in the series: "step" and "epoch" first,
// then the others sorted.
func (s *Series) Keys() []string {
	set := map[string]any{}
	for i := range s.Records {
		for _, k := range s.Records[i].Keys {
			set[k] = nil
		}
	}
	return KeyOrder(set)
}

// NumericKeys returns the keys that hold a number in at least one record, in the
// order of [Series.Keys].
func (s *Series) NumericKeys() []string {
	set := map[string]any{}
	for i := range s.Records {
		for k, v := range s.Records[i].Values {
			if _, ok := v.(float64); ok {
				set[k] = nil
			}
		}
	}
	return KeyOrder(set)
}

// Has reports whether key appears in any record.
func (s *Series) Has(key string) bool {
	for i := range s.Records {
		if _, ok := s.Records[i].Values[key]; ok {
			return true
		}
	}
	return false
}

// Column returns the numbers stored under key, in record order, from the records
// where key holds a number.
func (s *Series) Column(key string) []float64 {
	var out []float64
	for i := range s.Records {
		if v, ok := s.Records[i].Number(key); ok {
			out = append(out, v)
		}
	}
	return out
}

// Pairs returns the (x, y) values of the records where both keys hold numbers, in
// record order. An empty x uses each record's line number.
func (s *Series) Pairs(x, y string) (xs, ys []float64) {
	for i := range s.Records {
		r := &s.Records[i]
		yv, ok := r.Number(y)
		if !ok {
			continue
		}
		xv := float64(r.Line)
		if x != "" {
			if xv, ok = r.Number(x); !ok {
				continue
			}
		}
		xs = append(xs, xv)
		ys = append(ys, yv)
	}
	return xs, ys
}
