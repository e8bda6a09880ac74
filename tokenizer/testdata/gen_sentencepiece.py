#!/usr/bin/env python3
"""Writes the SentencePiece side of the tokenizer package's tests (Debian's python3-sentencepiece 0.1.97).

  /usr/bin/python3 gen_sentencepiece.py        (run in this folder)

- sp_slice.bin: a BPE model trained on the first 60% of data/Isaac.Newton-Opticks.txt (the lines before the
  cut), 1024 pieces, exported as llama2.c's tokenizer.py exports a model; sp_cases.json: the ids SentencePiece
  gives, without BOS or EOS, for held-out text: sentences from the rest of the book and made-up ones with
  punctuation, digits, apostrophes, newlines, tabs, letters outside ASCII and the training text, and
  leading, trailing and repeated spaces.
- sp_opticks_N.bin for N = 512, 1024, 4096: models trained on the whole book, to compare our trainer with.

Every model uses model_type=bpe, byte_fallback=True, normalization_rule_name=identity,
remove_extra_whitespaces=False, add_dummy_prefix=True, character_coverage=1.0, one thread.
"""
import json, os, struct, tempfile

import sentencepiece as spm

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data", "Isaac.Newton-Opticks.txt")

FLAGS = dict(model_type="bpe", byte_fallback=True, normalization_rule_name="identity",
             remove_extra_whitespaces=False, add_dummy_prefix=True, character_coverage=1.0,
             num_threads=1, minloglevel=2, max_sentence_length=1 << 20)


def train(text, vocab, prefix):
    """Trains on text (one sentence a line, as SentencePiece reads a file) and returns the processor."""
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt", delete=False) as f:
        f.write(text)
    try:
        spm.SentencePieceTrainer.train(input=f.name, model_prefix=prefix, vocab_size=vocab, **FLAGS)
    finally:
        os.remove(f.name)
    return spm.SentencePieceProcessor(model_file=prefix + ".model")


def export(sp, path):
    """Writes sp as llama2.c's tokenizer.bin: max_token_length, then score, length, bytes for every id."""
    toks, scores = [], []
    for i in range(sp.get_piece_size()):
        t = sp.id_to_piece(i)
        if i == sp.bos_id():
            t = "\n<s>\n"
        elif i == sp.eos_id():
            t = "\n</s>\n"
        toks.append(t.replace("\u2581", " ").encode("utf-8"))
        scores.append(sp.get_score(i))
    with open(path, "wb") as f:
        f.write(struct.pack("<I", max(len(t) for t in toks)))
        for b, s in zip(toks, scores):
            f.write(struct.pack("<fI", s, len(b)))
            f.write(b)


MADE_UP = [
    "",
    " ",
    "   ",
    "a",
    "Light is refracted.",
    "  two leading spaces",
    "trailing spaces   ",
    "repeated   spaces  between    words",
    "Newton's Opticks (1704), 4th ed. 1730: 3.14159 & 2,718; \"quoted\" -- dash!",
    "I don't know what I may seem to the world; but to myself I seem to have been only like a boy.",
    "It's the colours' order: red, orange, yellow, green, blue, indigo, violet?",
    "line one\nline two\n\nafter a blank line\n",
    "\nstarts with a newline",
    "tab\tseparated\tvalues\r\nwindows line",
    "Fraunhofer and Ångström; naïve café, Æther and œuvre, Straße, über",
    "Greek φῶς, Russian свет, Chinese 光, emoji 🌈 and ✓",
    "12345678901234567890 0.5 1e-9 42% #7 @home $5 ^_^ {x} [y] <z> ~ | \\ /",
    "×·§´ signs from the book, and ° ± µ ¶ from outside it",
    "UPPER CASE AND lower case AND MiXeD cAsE",
    "end with a newline\n",
]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    raw = open(CORPUS, "rb").read()
    nl = raw.find(b"\n", int(0.6 * len(raw)))
    head, rest = raw[:nl + 1].decode("utf-8"), raw[nl + 1:].decode("utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        sp = train(head, 1024, os.path.join(tmp, "slice"))
        export(sp, os.path.join(here, "sp_slice.bin"))
        held = [p.strip("\n") for p in rest.split("\n\n") if 40 <= len(p.strip()) <= 400][:40:2]
        cases = [{"text": t, "ids": sp.encode(t)} for t in MADE_UP + held]
        for c in cases:
            assert sp.decode(c["ids"]) == c["text"], c["text"]
        with open(os.path.join(here, "sp_cases.json"), "w", encoding="utf-8") as f:
            head = json.dumps({"model": "sp_slice.bin", "sentencepiece": spm.__version__, "flags": FLAGS})
            f.write(head[:-1] + ', "cases": [\n')
            f.write(",\n".join(json.dumps(c, ensure_ascii=False) for c in cases) + "\n]}\n")
        text = raw.decode("utf-8")
        for n in (512, 1024, 4096):
            export(train(text, n, os.path.join(tmp, "opticks")), os.path.join(here, "sp_opticks_%d.bin" % n))
    print("wrote sp_slice.bin, sp_cases.json (%d cases), sp_opticks_{512,1024,4096}.bin" % len(cases))


if __name__ == "__main__":
    main()
