// Package metrics records and reads the numbers a training run produces, and shows
// its progress while it runs.
//
// A metrics file holds JSON lines: one flat object per step or epoch, for example
//
//	{"step":12,"compiles":11,"loss":0.0123,"ms":231.5}
//	{"epoch":3,"loss":0.2,"test_acc":0.94,"train_acc":0.95}
//
// The types fit together as follows.
//
//   - [Writer] appends records to a file ([Open]). Each record is one line with its keys
//     in a fixed order ("step", then "epoch", then the others sorted) and is handed to
//     the operating system in a single write, so a crash loses at most the line being
//     written. Non-finite numbers are written as NaN, Infinity and -Infinity, the
//     spelling Python's json module reads and writes.
//   - [Read] and [Parse] turn a file back into a [Series]: its [Record]s in file order.
//     Every line must be a JSON object (blank lines aside); a malformed line is an error
//     that names file:line. The one exception is an incomplete last line without a
//     newline, which is what a crash mid-write leaves: it is dropped and reported in
//     [Series.Truncated]. A run that restarts from a checkpoint appends to the same file,
//     so a step (or, for records without a step, an epoch) may appear twice: the later
//     line is merged into the earlier record, its values winning, and the record keeps
//     its place; [Series.Superseded] counts the lines that replaced values.
//     [Series.Pairs] and [Series.Column] pick numeric columns by key.
//   - [MovingAverage] and [DefaultSpan] smooth a noisy column for plotting.
//   - [Progress] draws a live status line (step/total, metrics, ms/step, ETA) on a
//     terminal and plain periodic lines elsewhere; [IsTerminal] tells the two apart.
package metrics
