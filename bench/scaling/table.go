package main

import (
	"fmt"
	"io"
	"strings"
)

// printTable writes the rows as Markdown tables, training and generation (those c measured), with
// what they ran.
func printTable(out io.Writer, c config, rows []row) {
	if c.train {
		printTraining(out, c, rows)
	}
	if c.gen {
		printGeneration(out, c, rows)
	}
}

// printTraining writes the training table.
func printTraining(out io.Writer, c config, rows []row) {
	fmt.Fprintf(out, "\nTraining: scripts/train_lm.star (fp16 numerics) against bench/peers/torch_lm.py (best of %s threads), "+
		"equal steps, random token ids; ms/step the median after the first three steps; utilisation the model's FLOPs per step "+
		"over the step's time, of the host sgemm peak.\n\n", c.threads)
	fmt.Fprintln(out, "| shape | params | batch × seq | steps | anestar ms/step | tokens/s | TFLOP/s (of peak) | peak RSS | PyTorch ms/step | tokens/s | TFLOP/s | peak RSS | anestar / PyTorch |")
	fmt.Fprintln(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		peer, ratio := []string{"-", "-", "-", "-"}, "-"
		if r.peer.MS > 0 {
			peer = []string{fmt.Sprintf("%.0f (%s t)", r.peer.MS, r.peerThread), fmt.Sprintf("%.0f", r.peer.TokensS),
				fmt.Sprintf("%.3f", r.tflops(r.peer.MS)), mb(r.peer.RSSKB)}
			ratio = fmt.Sprintf("%.2fx", r.ane.MS/r.peer.MS)
		}
		fmt.Fprintf(out, "| %s | %.2fM | %d × %d | %d | %.0f | %.0f | %.3f (%.0f %%) | %s | %s | %s |\n", r.s.name, r.paramsM, r.s.batch, r.s.seq, r.steps,
			r.ane.MS, r.ane.TokensS, r.tflops(r.ane.MS), 100*r.tflops(r.ane.MS)/r.peakT, mb(r.ane.RSSKB), strings.Join(peer, " | "), ratio)
	}
}

// printGeneration writes the generation table.
func printGeneration(out io.Writer, c config, rows []row) {
	fmt.Fprintf(out, "\nGeneration: scripts/sample.star (fp16 numerics, the key/value cache) against llama2.c's run.c, greedy, "+
		"prompt %q then %d tokens, medians of %d alternating runs; random weights unless -model gave a file. "+
		"After the first: the tokens after the first one over the time after it, as run.c's \"achieved tok/s\" counts "+
		"(the ratio compares those); all: every token over the whole generation, the prompt and any compiling included.\n\n",
		c.prompt, c.genSteps, c.reps)
	fmt.Fprintln(out, "| shape | anestar tokens/s after the first | all | first token | peak RSS | tokens | run.c tokens/s after the first | peak RSS | anestar / run.c |")
	fmt.Fprintln(out, "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		them, ratio := "- | -", "-"
		if r.runc.afterS > 0 {
			them = fmt.Sprintf("%.1f | %s", r.runc.afterS, mb(r.runc.rssKB))
			if r.gen.afterS > 0 {
				ratio = fmt.Sprintf("%.2fx", r.gen.afterS/r.runc.afterS)
			}
		}
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f ms | %s | %d | %s | %s |\n", r.s.name, r.gen.afterS, r.gen.tokensS, r.gen.firstMS, mb(r.gen.rssKB), r.gen.tokens, them, ratio)
	}
}

// tflops is the model's TFLOP/s at ms per step.
func (r row) tflops(ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return r.flopsG / ms
}

// mb formats a peak resident set in KB as MB, "-" when unmeasured.
func mb(kb float64) string {
	if kb <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB", kb/1024)
}
