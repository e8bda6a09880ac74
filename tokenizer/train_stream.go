package tokenizer

import "io"

// TrainReader is TrainWith on the text read from r, about StreamChunk bytes at a time, each piece
// cut where a run of spaces starts after a non-space, as EncodeStream cuts it: the words are those of
// the whole text, so the vocabulary is TrainWith's. Memory: a piece of text and the table of distinct
// words with their counts, never the whole text. read, when not nil, gets the bytes read so far after
// each piece; progress is TrainWith's.
func TrainReader(r io.Reader, n int, opts TrainOptions, read func(bytes int64), progress func(pieces, n int)) (*Tokenizer, error) {
	return trainReader(r, n, opts, read, progress, StreamChunk)
}

// trainReader is TrainReader reading chunk bytes at a time.
func trainReader(r io.Reader, n int, opts TrainOptions, read func(bytes int64), progress func(pieces, n int), chunk int) (*Tokenizer, error) {
	wc := newWordCounts(opts.WhitespacePieces)
	err := readPieces(r, chunk, func(piece []byte, first bool, bytes int64) error {
		wc.add(string(piece), first)
		if read != nil {
			read(bytes)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	tr, err := trainCounts(wc, n, progress)
	if err != nil {
		return nil, err
	}
	return tr.tokenizer()
}
