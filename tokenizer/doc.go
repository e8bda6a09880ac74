// Package tokenizer is text in for language models: llama2.c's tokenizer.bin vocabularies, BPE encoding
// and decoding exactly as llama2.c's run.c does them (and SentencePiece, for the BPE models llama2.c
// exports), a BPE vocabulary trainer, and the uint16 token files llama2.c and nanoGPT keep data in.
//
// # Vocabularies
//
// A Tokenizer is a list of pieces with scores, indexed by id. Ids 0, 1, 2 are <unk>, <s> (BOS) and
// </s> (EOS); in a byte-fallback vocabulary ids 3..258 are the byte pieces <0x00>..<0xFF>, checked
// when the vocabulary is made (ByteFallback). Load and Parse read tokenizer.bin (uint32
// max_token_length, then for every id a float32 score, an int32 length and the piece's bytes; the
// vocabulary size is not stored: Load reads to the end, LoadSize takes it from a model's header);
// Save and MarshalBinary write it. Any defect of a file is a *FormatError naming the offset and the id.
//
// # Encoding
//
// Encode gives run.c's ids: the dummy-prefix space, one piece per character (bytes when there is none),
// then repeated merges of the adjacent pair whose concatenation is the highest-scoring piece, leftmost
// first. run.c rescans all tokens for each merge; Encode keeps a heap of adjacent pairs over a linked
// list, O(n log n), with the same result. Decode inverts it: Decode(Encode(t)) == t for any string t,
// valid UTF-8 or not. TokenBytes gives the bytes of text each id stands for, for bits per byte.
//
// # Training
//
// Train learns a vocabulary of N pieces (N counts the 259 reserved ones) from a text, as SentencePiece's
// BPE trainer does: the text splits into words before spaces, around runs of newlines and where
// letters, digits and other characters meet (so "light," is "light" then ","); every character is a
// piece; then greedy merges of the most frequent pair into pieces of up to MaxPieceChars characters.
// Scores make Encode reproduce the trainer's segmentation exactly, so a trained tokenizer.bin works in
// llama2.c too. On Newton's Opticks it trains in about the time SentencePiece's trainer takes
// (BenchmarkTrain, testdata/time_sentencepiece.py), and its vocabularies of 512, 1024 and 4096 pieces
// encode the book in 0.999, 0.989 and 0.972 times as many tokens as SentencePiece's (TestTrainQuality).
//
// # Token files
//
// AppendTokens / SaveTokens write little-endian uint16 ids without a header; ParseTokens / LoadTokens
// read them, checking every id against the vocabulary size.
//
// The tests check Encode and Decode against ids SentencePiece gave (testdata/gen_sentencepiece.py),
// the trainer against SentencePiece's on the same book, and fuzz the reader and the encoder.
package tokenizer
