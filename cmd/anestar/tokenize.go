package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anestar/anestar/internal/atomicfile"
	"github.com/anestar/anestar/internal/safefile"
	"github.com/anestar/anestar/tokenizer"
	"github.com/spf13/pflag"
)

func init() {
	register(command{
		name:    "tokenize",
		args:    "[flags] IN",
		summary: "encode text to a uint16 token file, train a BPE vocabulary, decode a token file",
		run:     runTokenize,
	})
}

// tokenizeOptions are the flags of `anestar tokenize`.
type tokenizeOptions struct {
	vocab  string // -t: the tokenizer.bin to use
	train  int    // --train: learn a vocabulary of this many pieces from IN
	save   string // --save: where the learned vocabulary goes
	output string // -o: the token file to write
	decode bool   // --decode: IN is a token file; print its text
	ids    string // --ids: print the ids of this text
	bos    bool   // --bos: start the token file with <s>
	quiet  bool   // -q: no counts, no progress
	spaces bool   // --whitespace-pieces: learn pieces of consecutive spaces
}

// largeInput is the size from which tokenize shows a progress line.
const largeInput = 1 << 20

func tokenizeFlags(o *tokenizeOptions) *pflag.FlagSet {
	fs := pflag.NewFlagSet("tokenize", pflag.ContinueOnError)
	fs.StringVarP(&o.vocab, "tokenizer", "t", "", "the vocabulary: a llama2.c `tokenizer.bin`")
	fs.IntVar(&o.train, "train", 0, "learn an `N`-piece BPE vocabulary from IN first (N counts the 259 reserved pieces)")
	fs.StringVar(&o.save, "save", "", "with --train: write the learned vocabulary to this `file`")
	fs.BoolVar(&o.spaces, "whitespace-pieces", false, "with --train: learn pieces of consecutive spaces (indentation), as SentencePiece's allow_whitespace_only_pieces")
	fs.StringVarP(&o.output, "output", "o", "", "write IN's tokens to this `file` (little-endian uint16)")
	fs.BoolVar(&o.decode, "decode", false, "IN is a token file: print its text")
	fs.StringVar(&o.ids, "ids", "", "print the ids of this `text` (no <s>), space-separated, on one line")
	fs.BoolVar(&o.bos, "bos", false, "start the token file with <s> (id 1)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print no counts and no progress on standard error")
	return fs
}

func tokenizeUsage(w io.Writer, fs *pflag.FlagSet) {
	fmt.Fprint(w, `Usage:
  anestar tokenize -t tok.bin IN.txt -o OUT.bin                  encode a text file to a token file
  anestar tokenize --train N --save tok.bin IN.txt [-o OUT.bin]  learn an N-piece vocabulary first
  anestar tokenize -t tok.bin --decode IN.bin                    print the text of a token file
  anestar tokenize -t tok.bin --ids "some text"                  print the ids of a text

Vocabularies are llama2.c tokenizer.bin files; token files hold little-endian uint16 ids, no header
(llama2.c's and nanoGPT's .bin). The text is encoded as one string, without <s> unless --bos: read
and encoded in pieces cut before spaces (the same ids, in memory that does not grow with the text)
unless a piece of the vocabulary holds a space inside; --train counts the words a piece at a time.
Counts and characters per token go to standard error, with a progress line on inputs over 1 MiB.
Exit codes: 0 ok, 1 a file is missing or invalid, 2 usage error.

Flags:
`)
	fmt.Fprint(w, flagUsages(fs))
}

func runTokenize(args []string, stdout, stderr io.Writer) int {
	var o tokenizeOptions
	fs := tokenizeFlags(&o)
	fs.SetOutput(io.Discard)
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "anestar tokenize: "+format+"\n\n", a...)
		tokenizeUsage(stderr, fs)
		return exitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			tokenizeUsage(stdout, fs)
			return exitOK
		}
		return usageErr("%v", err)
	}
	idsMode := fs.Changed("ids")
	switch {
	case fs.Changed("train") && o.vocab != "":
		return usageErr("-t and --train exclude each other: use a vocabulary or learn one")
	case fs.Changed("train") && o.train <= tokenizer.NumReserved:
		return usageErr("--train %d: the vocabulary must have more than the %d reserved pieces (<unk>, <s>, </s>, 256 bytes)", o.train, tokenizer.NumReserved)
	case fs.Changed("train") && o.save == "":
		return usageErr("--train needs --save FILE for the learned vocabulary")
	case o.save != "" && !fs.Changed("train"):
		return usageErr("--save goes with --train")
	case o.spaces && !fs.Changed("train"):
		return usageErr("--whitespace-pieces goes with --train")
	case !fs.Changed("train") && o.vocab == "":
		return usageErr("need -t tok.bin (or --train N --save tok.bin)")
	case (o.decode || idsMode) && fs.Changed("train"):
		return usageErr("--decode and --ids need -t, not --train")
	case o.decode && idsMode:
		return usageErr("--decode and --ids exclude each other")
	case idsMode && fs.NArg() != 0:
		return usageErr("--ids takes the text as its value; got the extra argument %q", fs.Arg(0))
	case !idsMode && fs.NArg() != 1:
		return usageErr("want one input file, got %d arguments", fs.NArg())
	case o.decode && o.output != "":
		return usageErr("--decode prints the text; -o is for encoding")
	case !o.decode && !idsMode && !fs.Changed("train") && o.output == "":
		return usageErr("need -o OUT.bin for the tokens")
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "anestar tokenize: %v\n", err)
		return exitError
	}
	if err := tokenizeCollision(fs.Arg(0), o); err != nil {
		return fail(err)
	}
	report := func(format string, a ...any) {
		if !o.quiet {
			fmt.Fprintf(stderr, format, a...)
		}
	}

	var tok *tokenizer.Tokenizer
	if o.vocab != "" {
		var err error
		if tok, err = tokenizer.Load(o.vocab); err != nil {
			return fail(err)
		}
	}
	switch {
	case idsMode:
		ids := tok.Encode(o.ids, false, false)
		fmt.Fprintln(stdout, joinInts(ids))
		report("%d chars, %d tokens, %s chars/token\n", utf8.RuneCountInString(o.ids), len(ids), perToken(utf8.RuneCountInString(o.ids), len(ids)))
		return exitOK
	case o.decode:
		ids, err := tokenizer.LoadTokens(fs.Arg(0), tok.VocabSize())
		if err != nil {
			return fail(err)
		}
		text, err := tok.Decode(ids)
		if err != nil {
			return fail(err)
		}
		if _, err := io.WriteString(stdout, text); err != nil {
			return fail(err)
		}
		n := utf8.RuneCountInString(text)
		report("%s: %d tokens, %d chars, %s chars/token\n", fs.Arg(0), len(ids), n, perToken(n, len(ids)))
		return exitOK
	}

	in := fs.Arg(0)
	if fs.Changed("train") { // the words counted a piece at a time: memory grows with the distinct words, not the text
		start := time.Now()
		f, size, err := tokenizer.OpenRegular(in)
		if err != nil {
			return fail(err)
		}
		prog := newLineProgress(stderr, !o.quiet && size >= largeInput)
		tok, err = tokenizer.TrainReader(f, o.train, tokenizer.TrainOptions{WhitespacePieces: o.spaces},
			func(read int64) { prog.show("counting words: %d%%", 100*read/max(size, 1)) },
			func(done, n int) { prog.show("training: %d/%d pieces", done, n) })
		f.Close()
		prog.clear()
		if err != nil {
			return fail(err)
		}
		if err := tok.Save(o.save); err != nil {
			return fail(err)
		}
		report("%s: learned %d pieces in %.2f s, saved to %s\n", in, tok.VocabSize(), time.Since(start).Seconds(), o.save)
		if o.output == "" {
			return exitOK
		}
		o.vocab = o.save
	}
	if tok.CanStream() { // a text of any size, in bounded memory
		if tok.VocabSize() > tokenizer.MaxTokenFileVocab {
			return fail(fmt.Errorf("%s has %d pieces: uint16 token files hold ids of vocabularies of at most %d pieces", o.vocab, tok.VocabSize(), tokenizer.MaxTokenFileVocab))
		}
		st, err := encodeFile(tok, in, o.output, o.bos, stderr, o.quiet)
		if err != nil {
			return fail(err)
		}
		report("%s: %d bytes, %d chars, %d tokens (vocabulary of %d pieces), %s chars/token; wrote %s\n",
			in, st.bytes, st.chars, st.tokens, tok.VocabSize(), perToken(st.chars, st.tokens), o.output)
		return exitOK
	}
	data, err := tokenizer.ReadFile(in)
	if err != nil {
		return fail(err)
	}
	text := string(data)
	prog := newLineProgress(stderr, !o.quiet && len(text) >= largeInput)
	if tok.VocabSize() > tokenizer.MaxTokenFileVocab {
		return fail(fmt.Errorf("%s has %d pieces: uint16 token files hold ids of vocabularies of at most %d pieces", o.vocab, tok.VocabSize(), tokenizer.MaxTokenFileVocab))
	}
	ids := tok.EncodeProgress(text, o.bos, false, func(done, total int) {
		prog.show("encoding: %d%%", 100*int64(done)/int64(max(total, 1)))
	})
	prog.clear()
	if err := tokenizer.SaveTokens(o.output, ids, tok.VocabSize()); err != nil {
		return fail(err)
	}
	n := utf8.RuneCountInString(text)
	report("%s: %d bytes, %d chars, %d tokens (vocabulary of %d pieces), %s chars/token; wrote %s\n",
		in, len(data), n, len(ids), tok.VocabSize(), perToken(n, len(ids)), o.output)
	return exitOK
}

// encodeStats counts what encodeFile read and wrote.
type encodeStats struct{ bytes, chars, tokens int }

// encodeFile encodes the text file in to the token file out (atomically) with tokenizer.EncodeStream:
// memory does not grow with the text. A progress line goes to stderr for inputs over largeInput.
func encodeFile(tok *tokenizer.Tokenizer, in, out string, bos bool, stderr io.Writer, quiet bool) (encodeStats, error) {
	var st encodeStats
	f, size, err := tokenizer.OpenRegular(in)
	if err != nil {
		return st, err
	}
	defer f.Close()
	prog := newLineProgress(stderr, !quiet && size >= largeInput)
	err = atomicfile.WriteFunc(out, 0o644, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		var buf []byte
		err := tok.EncodeStream(f, bos, func(ids []int) error {
			var err error
			if buf, err = tokenizer.AppendTokens(buf[:0], ids, tok.VocabSize()); err != nil {
				return err
			}
			st.tokens += len(ids)
			_, err = bw.Write(buf)
			return err
		}, func(piece []byte, read int64) {
			st.bytes += len(piece)
			st.chars += utf8.RuneCount(piece)
			prog.show("encoding: %d%%", 100*read/max(size, 1))
		})
		if err != nil {
			return err
		}
		return bw.Flush()
	})
	prog.clear()
	if err != nil {
		return st, fmt.Errorf("writing %s: %w", out, err)
	}
	return st, nil
}

func joinInts(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}

func perToken(chars, tokens int) string {
	if tokens == 0 {
		return "-"
	}
	return strconv.FormatFloat(float64(chars)/float64(tokens), 'f', 3, 64)
}

// A lineProgress shows one progress line on standard error: redrawn in place on a terminal, else a
// line every 10 seconds.
type lineProgress struct {
	w        io.Writer
	on, tty  bool
	last     time.Time
	interval time.Duration
	shown    bool
}

func newLineProgress(w io.Writer, on bool) *lineProgress {
	p := &lineProgress{w: w, on: on, tty: isTerminal(w), last: time.Now(), interval: 10 * time.Second}
	if p.tty {
		p.interval = 200 * time.Millisecond
	}
	return p
}

func (p *lineProgress) show(format string, a ...any) {
	if !p.on || time.Since(p.last) < p.interval {
		return
	}
	p.last = time.Now()
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K"+format, a...)
		p.shown = true
	} else {
		fmt.Fprintf(p.w, format+"\n", a...)
	}
}

// clear removes a line redrawn in place.
func (p *lineProgress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// tokenizeCollision refuses, before anything is written, an output (--save, -o) that names an input
// (the text, -t's vocabulary) or the other output, the same file through links included: writing it
// would destroy the input, or leave one output in place of the other.
func tokenizeCollision(in string, o tokenizeOptions) error {
	type file struct{ flag, path string }
	var inputs, outputs []file
	if in != "" {
		inputs = append(inputs, file{"the input", in})
	}
	if o.vocab != "" {
		inputs = append(inputs, file{"-t", o.vocab})
	}
	if o.save != "" {
		outputs = append(outputs, file{"--save", o.save})
	}
	if o.output != "" {
		outputs = append(outputs, file{"-o", o.output})
	}
	for i, out := range outputs {
		for _, other := range append(inputs, outputs[:i]...) {
			if safefile.Same(out.path, other.path) {
				return fmt.Errorf("%s %s is the same file as %s %s: writing it would destroy that; choose another path", out.flag, out.path, other.flag, other.path)
			}
		}
	}
	return nil
}
