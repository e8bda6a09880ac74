package tokenizer

import "testing"

// BenchmarkTrain trains on the whole corpus at the sizes of testdata/time_sentencepiece.py, which times
// SentencePiece's trainer on the same file, and reports our token count relative to SentencePiece's
// (both vocabularies encoded by Encode):
//
//	go test -run X -bench Train -benchtime 5x ./tokenizer
//	/usr/bin/python3 tokenizer/testdata/time_sentencepiece.py
func BenchmarkTrain(b *testing.B) {
	text := opticks(b)
	for _, n := range []int{512, 1024, 4096} {
		b.Run("n="+itoa(n), func(b *testing.B) {
			var tok *Tokenizer
			for b.Loop() {
				var err error
				if tok, err = Train(text, n); err != nil {
					b.Fatal(err)
				}
			}
			sp, err := Load("testdata/sp_opticks_" + itoa(n) + ".bin")
			if err != nil {
				b.Fatal(err)
			}
			ours, theirs := len(tok.Encode(text, false, false)), len(sp.Encode(text, false, false))
			b.ReportMetric(float64(ours), "tokens")
			b.ReportMetric(float64(ours)/float64(theirs), "tokens/sp")
		})
	}
}

// BenchmarkEncode encodes the whole corpus as one string with SentencePiece's 4096-piece vocabulary.
func BenchmarkEncode(b *testing.B) {
	text := opticks(b)
	tok, err := Load("testdata/sp_opticks_4096.bin")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Encode(text, false, false)
	}
}
