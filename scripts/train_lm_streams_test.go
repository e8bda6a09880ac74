package scripts

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestTrainLMStreams runs train_lm.star small with its sequences on two streams of kernels (streams=2,
// kernel.start): it compiles each stream's four kernels, trains to the same bits twice, resumes from
// the step-3 checkpoint to the weights of the uninterrupted run, and refuses streams that do not
// divide the sequences of an eval.
func TestTrainLMStreams(t *testing.T) {
	var runs [2][]string
	var want map[string][]float32
	for i := range runs {
		dir := t.TempDir()
		res, out := mustRunLM(t, lmSmall(dir, "streams", "2"), false)
		if !regexp.MustCompile(`Compiles: +10 at the start, 0 since`).MatchString(out) {
			t.Errorf("output has no 10 compiles (two streams of four kernels and the sampler's two):\n%s", out)
		}
		runs[i] = sameBitsRecords(t, filepath.Join(dir, "lm.jsonl"))
		if i == 0 {
			want = map[string][]float32{}
			for k, w := range tensorDict(t, res, "W") {
				want[k] = slices.Clone(w.Data())
			}
		}
	}
	if len(runs[0]) == 0 || !slices.Equal(runs[0], runs[1]) {
		t.Errorf("two runs on two streams differ:\n%s\n---\n%s", strings.Join(runs[0], "\n"), strings.Join(runs[1], "\n"))
	}
	dir := t.TempDir() // stopped at step 3 and resumed: the same weights, bit for bit
	mustRunLM(t, lmSmall(dir, "streams", "2", "steps", "3"), false)
	res, out := mustRunLM(t, lmSmall(dir, "streams", "2"), true)
	if !strings.Contains(out, "[resumed at step 3") {
		t.Errorf("resumed run says:\n%s", out)
	}
	for k, w := range tensorDict(t, res, "W") {
		if !slices.Equal(w.Data(), want[k]) {
			t.Errorf("resumed %s differs from the uninterrupted run's", k)
		}
	}
	_, out, err := runLM(t, lmSmall(t.TempDir(), "streams", "3"), false)
	if err == nil || !strings.Contains(err.Error(), "streams = 3: must divide the 2 sequences of an eval (batch 2): try --set streams=1") {
		t.Errorf("streams=3: error %v, want the streams message\n%s", err, out)
	}
}
