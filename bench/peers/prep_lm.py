#!/usr/bin/python3
"""Token files for bench/compare -mode lm from a text: a SentencePiece vocabulary, a training and a validation split.

The text's last --val-frac of bytes validates, the cut moved forward to the next newline (so no line is split);
SentencePiece's BPE trainer learns --vocab pieces from the training part alone (byte fallback, every character
covered, no normalisation, spaces kept as they are, a dummy space prefix: llama2.c's tokenizer settings); the
vocabulary is written as llama2.c's tokenizer.bin (the piece '\u2581' as a space, BOS and EOS as "\\n<s>\\n" and
"\\n</s>\\n", scores kept), and each part, encoded whole without BOS, as little-endian uint16 ids.

    /usr/bin/python3 bench/peers/prep_lm.py TEXT OUT [--vocab 1024] [--val-frac 0.1]

writes OUT/tokenizer.bin, OUT/train.bin, OUT/val.bin and OUT/sp.model, and prints the counts as one JSON line.
Needs Debian's python3-sentencepiece and python3-numpy.
"""
import argparse
import json
import os
import struct

import numpy as np
import sentencepiece as spm


def write_llama2_vocab(sp, path):
    """llama2.c's tokenizer.bin: the longest piece's length, then per piece its score, length and bytes."""
    pieces = []
    for i in range(sp.get_piece_size()):
        p = {sp.bos_id(): "\n<s>\n", sp.eos_id(): "\n</s>\n"}.get(i, sp.id_to_piece(i))
        pieces.append((sp.get_score(i), p.replace("\u2581", " ").encode("utf-8")))
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(b) for _, b in pieces)))
        for score, b in pieces:
            f.write(struct.pack("<fI", score, len(b)) + b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("text")
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, default=1024)
    ap.add_argument("--val-frac", type=float, default=0.1)
    a = ap.parse_args()
    if not 0 < a.val_frac < 1:
        ap.error("--val-frac %g: must lie in (0, 1)" % a.val_frac)
    raw = open(a.text, "rb").read()
    nl = raw.find(b"\n", int((1 - a.val_frac) * len(raw)))
    cut = len(raw) if nl < 0 else nl + 1
    try:
        train, val = raw[:cut].decode("utf-8"), raw[cut:].decode("utf-8")
    except UnicodeDecodeError as e:
        ap.error("%s is not UTF-8 text (byte %d)" % (a.text, e.start))
    os.makedirs(a.out, exist_ok=True)
    part = os.path.join(a.out, "train.txt")
    with open(part, "w", encoding="utf-8") as f:
        f.write(train)
    spm.SentencePieceTrainer.train(input=part, model_prefix=os.path.join(a.out, "sp"), model_type="bpe",
                                   vocab_size=a.vocab, byte_fallback=True, character_coverage=1.0,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   add_dummy_prefix=True, num_threads=1, minloglevel=2, max_sentence_length=1 << 20)
    os.remove(part)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(a.out, "sp.model"))
    write_llama2_vocab(sp, os.path.join(a.out, "tokenizer.bin"))
    ids = {name: sp.encode(t) for name, t in (("train", train), ("val", val))}
    for name, v in ids.items():
        np.asarray(v, dtype="<u2").tofile(os.path.join(a.out, name + ".bin"))
    print(json.dumps({"vocab": a.vocab, "split_byte": cut, "train_tokens": len(ids["train"]), "val_tokens": len(ids["val"]),
                      "train_bytes": cut, "val_bytes": len(raw) - cut}))


if __name__ == "__main__":
    main()
