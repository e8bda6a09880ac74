#!/usr/bin/env python3
"""Times SentencePiece's BPE trainer on data/Isaac.Newton-Opticks.txt at 512, 1024 and 4096 pieces, with the
flags of gen_sentencepiece.py (one thread), for comparison with `go test -bench Train ./tokenizer`.

  /usr/bin/python3 tokenizer/testdata/time_sentencepiece.py [--reps 5]

Prints, for each size, the best and the median of the repetitions in seconds (training only: the input file
is written once beforehand and the model files go to a temporary folder).
"""
import argparse, os, statistics, tempfile, time

import sentencepiece as spm

from gen_sentencepiece import CORPUS, FLAGS


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for n in (512, 1024, 4096):
            times = []
            for _ in range(a.reps):
                t0 = time.perf_counter()
                spm.SentencePieceTrainer.train(input=CORPUS, model_prefix=os.path.join(tmp, "m"), vocab_size=n, **FLAGS)
                times.append(time.perf_counter() - t0)
            print("n=%d best %.3f s median %.3f s" % (n, min(times), statistics.median(times)))


if __name__ == "__main__":
    main()
