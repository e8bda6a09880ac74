#!/usr/bin/env bash
# corpora.sh OUT: the three corpora of the language model's comparisons with PyTorch, as token files for
# bench/compare -mode lm (bench/peers/prep_lm.py: a 1024-piece SentencePiece vocabulary trained on the first
# 90 %, the last 10 % validating), and as text for train_lm.star's own vocabulary:
#
#   OUT/opticks   Newton's Opticks (data/, public domain), 567 KB of 18th-century English prose
#   OUT/austen    Austen's Pride and Prejudice (data/, public domain), 692 KB of 19th-century fiction
#   OUT/gohttp    Go's net/http package, its non-test .go files in name order (the Go toolchain's own
#                 source, BSD-licensed; the bytes depend on the Go version, which corpus.txt's neighbour
#                 go-version records), about 0.9 MB of source code
#
# Each OUT/NAME holds corpus.txt, tokenizer.bin, train.bin, val.bin and sp.model. Needs /usr/bin/python3
# with sentencepiece and numpy.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd); out=$1
mkdir -p "$out"/opticks "$out"/austen "$out"/gohttp
cp "$root/data/Isaac.Newton-Opticks.txt" "$out/opticks/corpus.txt"
cp "$root/data/Jane.Austen-Pride.and.Prejudice.txt" "$out/austen/corpus.txt"
(cd "$(go env GOROOT)/src/net/http" && ls *.go | grep -v '_test\.go$' | LC_ALL=C sort | xargs cat) > "$out/gohttp/corpus.txt"
go version > "$out/gohttp/go-version"
for c in opticks austen gohttp; do
  printf '%s: ' "$c"
  /usr/bin/python3 "$root/bench/peers/prep_lm.py" "$out/$c/corpus.txt" "$out/$c" --vocab 1024
done
