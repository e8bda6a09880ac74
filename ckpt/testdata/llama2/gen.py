#!/usr/bin/python3
"""Reference llama2.c models for the ckpt tests, written with PyTorch from the formulas.

    gen.py write DIR    writes the models, a tokenizer, logits and greedy continuations into DIR
    gen.py check DIR    reads every *.bin model file in DIR (files written by anestar) with this
                        script's own reader and checks weights, RoPE tables and logits against
                        the committed files beside this script

The model is llama2.c's (model.py): token embedding; per layer RMSNorm (eps 1e-5), attention
with RoPE (theta 10000, adjacent pairs rotated) and grouped key/value heads, residual, RMSNorm,
SwiGLU feed-forward, residual; final RMSNorm; classifier (tied to the embedding or not). The
file layouts are llama2.c's export.py ones: version 0 (7 int32, negative vocab = own
classifier, RoPE tables) and version 1 (256-byte header with magic, version, shared flag).
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

DIM, HIDDEN, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ = 64, 172, 2, 4, 2, 300, 32
HERE = os.path.dirname(os.path.abspath(__file__))
LAYER_KINDS = ["attention_norm.weight", "attention.wq.weight", "attention.wk.weight",
               "attention.wv.weight", "attention.wo.weight", "ffn_norm.weight",
               "feed_forward.w1.weight", "feed_forward.w2.weight", "feed_forward.w3.weight"]
PROMPT = "the cat sat"
MAGIC = 0x616B3432


# ---------------------------------------------------------------------------- the models

def make_model(seed, shared):
    """Random weights, larger than model.py's init so that logits spread and greedy picks are clear."""
    g = torch.Generator().manual_seed(seed)
    hd = DIM // HEADS
    kv = KV_HEADS * hd
    def mat(r, c, std):
        return (torch.randn(r, c, generator=g) * std).float()
    def norm():
        return (1 + 0.2 * torch.randn(DIM, generator=g)).float()
    w = {"tok_embeddings.weight": mat(VOCAB, DIM, 0.5)}
    for l in range(LAYERS):
        p = f"layers.{l}."
        w[p + "attention_norm.weight"] = norm()
        w[p + "attention.wq.weight"] = mat(DIM, DIM, 0.3)
        w[p + "attention.wk.weight"] = mat(kv, DIM, 0.3)
        w[p + "attention.wv.weight"] = mat(kv, DIM, 0.2)
        w[p + "attention.wo.weight"] = mat(DIM, DIM, 0.2)
        w[p + "ffn_norm.weight"] = norm()
        w[p + "feed_forward.w1.weight"] = mat(HIDDEN, DIM, 0.2)
        w[p + "feed_forward.w2.weight"] = mat(DIM, HIDDEN, 0.15)
        w[p + "feed_forward.w3.weight"] = mat(HIDDEN, DIM, 0.2)
    w["norm.weight"] = norm()
    if not shared:
        w["output.weight"] = mat(VOCAB, DIM, 0.3)
    cfg = dict(dim=DIM, hidden=HIDDEN, layers=LAYERS, heads=HEADS, kv_heads=KV_HEADS,
               vocab=VOCAB, max_seq_len=SEQ, shared=shared)
    return cfg, w


def rope(hd, seq, dtype):
    """freqs_i = 1/10000^(2i/hd), angle = t * freqs_i; cos and sin [seq, hd/2]."""
    freqs = 1.0 / (10000.0 ** (torch.arange(0, hd, 2, dtype=dtype) / hd))
    ang = torch.outer(torch.arange(seq, dtype=dtype), freqs)
    return torch.cos(ang), torch.sin(ang)


def rmsnorm(x, w):
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w


def forward(cfg, w, tokens, dtype=torch.float32):
    """Logits [T, vocab] for the token list, every position attending causally to the earlier ones."""
    W = {k: v.to(dtype) for k, v in w.items()}
    T = len(tokens)
    hd = cfg["dim"] // cfg["heads"]
    rep = cfg["heads"] // cfg["kv_heads"]
    cos, sin = rope(hd, T, dtype)
    x = W["tok_embeddings.weight"][torch.tensor(tokens)]
    mask = torch.triu(torch.full((T, T), float("-inf"), dtype=dtype), diagonal=1)

    def rot(z):  # z [T, heads, hd]: rotate pairs (2i, 2i+1) by angle t * freq_i
        a, b = z[..., 0::2], z[..., 1::2]
        c, s = cos[:, None, :], sin[:, None, :]
        return torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(-2)

    for l in range(cfg["layers"]):
        p = f"layers.{l}."
        h = rmsnorm(x, W[p + "attention_norm.weight"])
        q = (h @ W[p + "attention.wq.weight"].T).view(T, cfg["heads"], hd)
        k = (h @ W[p + "attention.wk.weight"].T).view(T, cfg["kv_heads"], hd)
        v = (h @ W[p + "attention.wv.weight"].T).view(T, cfg["kv_heads"], hd)
        q, k = rot(q), rot(k)
        k = k.repeat_interleave(rep, dim=1)  # query head j uses key/value head j // rep
        v = v.repeat_interleave(rep, dim=1)
        att = torch.einsum("thd,shd->hts", q, k) / math.sqrt(hd) + mask
        att = torch.softmax(att, dim=-1)
        o = torch.einsum("hts,shd->thd", att, v).reshape(T, cfg["dim"])
        x = x + o @ W[p + "attention.wo.weight"].T
        h = rmsnorm(x, W[p + "ffn_norm.weight"])
        a = h @ W[p + "feed_forward.w1.weight"].T
        x = x + (torch.nn.functional.silu(a) * (h @ W[p + "feed_forward.w3.weight"].T)) @ W[p + "feed_forward.w2.weight"].T
    x = rmsnorm(x, W["norm.weight"])
    cls = W["tok_embeddings.weight"] if cfg["shared"] else W["output.weight"]
    return x @ cls.T


def greedy(cfg, w, prompt_ids, total):
    """run.c's greedy loop: feed the prompt, then the argmax, until `total` tokens are fed or BOS
    comes out; the last pick is kept (run.c prints it). Returns the generated ids and the smallest
    float64 gap between the best and second-best logit over the picks."""
    ids = list(prompt_ids)
    gen, gap = [], float("inf")
    while len(ids) <= total:
        lg = forward(cfg, w, ids[-total:] if len(ids) > total else ids, torch.float64)[-1]
        top = torch.topk(lg, 2).values
        gap = min(gap, float(top[0] - top[1]))
        nxt = int(torch.argmax(lg))
        if nxt == 1:
            break
        gen.append(nxt)
        ids.append(nxt)
        if len(ids) > total:
            break
    return gen, gap


# ---------------------------------------------------------------------------- tokenizer (run.c's)

def pieces():
    out = [b"<unk>", b"\n<s>\n", b"\n</s>\n"] + [b"<0x%02X>" % i for i in range(256)]
    singles = [b" "] + [bytes([c]) for c in b"etaoinshrdlcumwfgypbvkjxqz"]
    merges = [b"th", b"he", b"at", b"in", b"on", b"er", b" c", b" s", b"the", b" the",
              b"cat", b" cat", b"sat", b" sat"]
    scores = [0.0] * len(out) + [-1000.0] * len(singles) + [-1.0 - i for i in range(len(merges))]
    out += singles + merges
    assert len(out) == VOCAB
    return out, scores


def write_tokenizer(path):
    ps, scores = pieces()
    with open(path, "wb") as f:
        f.write(struct.pack("<i", max(len(p) for p in ps)))
        for p, s in zip(ps, scores):
            f.write(struct.pack("<fi", s, len(p)) + p)


def encode(text):
    """run.c's encode with BOS: dummy-prefix space, one token per character (or byte fallback),
    then the best-scoring merge of adjacent pieces until none applies."""
    ps, scores = pieces()
    index = {p: i for i, p in enumerate(ps)}
    toks = [1]
    body = [index[b" "]]
    for ch in text.encode():
        b = bytes([ch])
        body.append(index[b] if b in index else ch + 3)
    while True:
        best, at = None, -1
        for i in range(len(body) - 1):
            m = ps[body[i]] + ps[body[i + 1]]
            if m in index and (best is None or scores[index[m]] > scores[best]):
                best, at = index[m], i
        if best is None:
            break
        body[at:at + 2] = [best]
    return toks + body


def decode_text(ids):
    """What run.c prints for the sequence ids (BOS first): each piece after the first, leading
    space dropped after BOS, byte pieces as bytes, unprintable single bytes skipped; a newline."""
    ps, _ = pieces()
    out = b""
    for prev, tok in zip(ids, ids[1:]):
        p = ps[tok]
        if prev == 1 and p.startswith(b" "):
            p = p[1:]
        if p.startswith(b"<0x") and len(p) == 6:
            p = bytes([int(p[3:5], 16)])
        if len(p) == 1 and not (0x20 <= p[0] <= 0x7E or 0x09 <= p[0] <= 0x0D):
            continue
        out += p
    return (out + b"\n").decode("latin-1")


# ---------------------------------------------------------------------------- files

def f32(t):
    return t.detach().contiguous().view(-1).numpy().astype("<f4").tobytes()


def export(path, cfg, w, version):
    L = cfg["layers"]
    names = lambda kind: [f"layers.{l}.{kind}" for l in range(L)]
    with open(path, "wb") as f:
        fields = [cfg["dim"], cfg["hidden"], L, cfg["heads"], cfg["kv_heads"], cfg["vocab"], cfg["max_seq_len"]]
        if version == 0:
            if not cfg["shared"]:
                fields[5] = -fields[5]
            f.write(struct.pack("<7i", *fields))
            order = ["tok_embeddings.weight"] + sum((names(k) for k in LAYER_KINDS), []) + ["norm.weight"]
            for n in order:
                f.write(f32(w[n]))
            cos, sin = rope(cfg["dim"] // cfg["heads"], cfg["max_seq_len"], torch.float32)
            f.write(f32(cos) + f32(sin))
        else:
            hdr = struct.pack("<Ii7iB", MAGIC, 1, *fields, int(cfg["shared"]))
            f.write(hdr + b"\0" * (256 - len(hdr)))
            order = names(LAYER_KINDS[0]) + names(LAYER_KINDS[5]) + ["norm.weight", "tok_embeddings.weight"]
            order += sum((names(LAYER_KINDS[k]) for k in (1, 2, 3, 4, 6, 7, 8)), [])
            for n in order:
                f.write(f32(w[n]))
        if not cfg["shared"]:
            f.write(f32(w["output.weight"]))


def read(path):
    """This script's own reader: (version, cfg, weights, rope tables or None)."""
    data = open(path, "rb").read()
    magic, ver = struct.unpack_from("<Ii", data, 0)
    if magic == MAGIC:
        assert ver == 1, f"version {ver}"
        fields = struct.unpack_from("<7i", data, 8)
        shared, pos = bool(data[36]), 256
    else:
        ver = 0
        fields = struct.unpack_from("<7i", data, 0)
        shared, pos = fields[5] > 0, 28
    dim, hidden, L, heads, kvh, vocab, seq = fields
    vocab = abs(vocab)
    hd = dim // heads
    cfg = dict(dim=dim, hidden=hidden, layers=L, heads=heads, kv_heads=kvh, vocab=vocab, max_seq_len=seq, shared=shared)
    shapes = {"attention_norm.weight": [dim], "ffn_norm.weight": [dim],
              "attention.wq.weight": [dim, dim], "attention.wo.weight": [dim, dim],
              "attention.wk.weight": [kvh * hd, dim], "attention.wv.weight": [kvh * hd, dim],
              "feed_forward.w1.weight": [hidden, dim], "feed_forward.w3.weight": [hidden, dim],
              "feed_forward.w2.weight": [dim, hidden]}
    w = {}
    def take(shape):
        nonlocal pos
        n = int(np.prod(shape))
        t = torch.from_numpy(np.frombuffer(data, "<f4", n, pos).copy()).view(*shape)
        pos += 4 * n
        return t
    def kinds(ks):
        for k in ks:
            for l in range(L):
                w[f"layers.{l}.{k}"] = take(shapes[k])
    tables = None
    if ver == 0:
        w["tok_embeddings.weight"] = take([vocab, dim])
        kinds(LAYER_KINDS)
        w["norm.weight"] = take([dim])
        tables = (take([seq, hd // 2]), take([seq, hd // 2]))
    else:
        kinds([LAYER_KINDS[0], LAYER_KINDS[5]])
        w["norm.weight"] = take([dim])
        w["tok_embeddings.weight"] = take([vocab, dim])
        kinds([LAYER_KINDS[k] for k in (1, 2, 3, 4, 6, 7, 8)])
    if not shared:
        w["output.weight"] = take([vocab, dim])
    assert pos == len(data), f"{path}: {len(data) - pos} bytes left over"
    return ver, cfg, w, tables


# ---------------------------------------------------------------------------- modes

# The committed models: name, seed, shared classifier, file version. The seeds were chosen so that
# every greedy pick leads the runner-up by more than 0.1 (float64), far above fp32 rounding.
MODELS = [("tied", 7, True, 0), ("untied", 15, False, 1)]


def write(out):
    os.makedirs(out, exist_ok=True)
    write_tokenizer(os.path.join(out, "tokenizer.bin"))
    rng = np.random.default_rng(5)
    tokens = [1] + [int(t) for t in rng.integers(3, VOCAB, SEQ - 1)]
    prompt_ids = encode(PROMPT)
    exp = {"tokens": tokens, "prompt": PROMPT, "prompt_ids": prompt_ids, "models": {}}
    for name, seed, shared, version in MODELS:
        cfg, w = make_model(seed, shared)
        fname = f"{name}.v{version}.bin"
        export(os.path.join(out, fname), cfg, w, version)
        logits = forward(cfg, w, tokens).numpy().astype("<f4")
        np.save(os.path.join(out, f"{name}.logits.npy"), logits)
        gen, gap = greedy(cfg, w, prompt_ids, SEQ)
        exp["models"][name] = {
            "file": fname, "version": version, "config": cfg, "logits": f"{name}.logits.npy",
            "greedy": gen, "greedy_min_gap": gap, "text": decode_text(prompt_ids + gen),
            "tensors": {n: {"shape": list(t.shape), "sum": float(t.double().sum()),
                            "first": [float(x) for x in t.reshape(-1)[:4]]} for n, t in w.items()},
        }
        print(f"{fname}: greedy {gen} (smallest top-2 gap {gap:.4f})")
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
        f.write("\n")


def check(ours):
    exp = json.load(open(os.path.join(HERE, "expected.json")))
    refs = {}
    for name, m in exp["models"].items():
        _, cfg, w, _ = read(os.path.join(HERE, m["file"]))
        refs[name] = (cfg, w, np.load(os.path.join(HERE, m["logits"])))
    files = sorted(f for f in os.listdir(ours) if f.endswith(".bin") and f != "tokenizer.bin")
    assert files, f"no model files in {ours}"
    bad = 0
    for fn in files:
        ver, cfg, w, tables = read(os.path.join(ours, fn))
        name = "tied" if cfg["shared"] else "untied"
        rcfg, rw, rlogits = refs[name]
        # Each quantity on its own, with its own tolerance: the header and the weights are our file's
        # bytes (equal), the RoPE tables within an ulp of PyTorch's, and the logits, which PyTorch
        # computes here with this machine's BLAS kernels, within 1e-5 of each row's largest |logit| of
        # those committed from the machine that wrote them.
        problems = []  # each names its quantity and by how much it differs
        if cfg != rcfg:
            problems.append(f"header {cfg} differs from {rcfg}")
        if w.keys() != rw.keys():
            problems.append(f"tensors {sorted(w.keys() ^ rw.keys())} are in one file only")
        else:
            problems += [f"weights {k} differ" for k in w if not torch.equal(w[k], rw[k])]
        same = "equal" if not problems else "DIFFER"
        note = ""
        if tables is not None:
            cos, sin = rope(cfg["dim"] // cfg["heads"], cfg["max_seq_len"], torch.float32)
            ulps = max(int(np.abs(a.numpy().view(np.int32).astype(np.int64) - b.numpy().view(np.int32).astype(np.int64)).max())
                       for a, b in ((tables[0], cos), (tables[1], sin)))
            exact = int((tables[0] == cos).sum() + (tables[1] == sin).sum())
            note = f", RoPE tables {exact}/{2 * cos.numel()} equal to PyTorch's, largest difference {ulps} ulp"
            if ulps > 1:
                problems.append(f"RoPE tables differ from PyTorch's by {ulps} ulp (at most 1)")
        logits = forward(cfg, w, exp["tokens"]).numpy().astype(np.float64)
        ref = rlogits.astype(np.float64)
        d = float(np.abs(logits - ref).max())
        rel = float((np.abs(logits - ref).max(axis=-1) / np.abs(ref).max(axis=-1)).max())
        if not rel <= 1e-5:
            problems.append(f"logits differ by {d} (relative {rel:.3g} of the row's largest, at most 1e-5)")
        print(f"{fn}: version {ver}, {name}, header and weights {same}, "
              f"logits max |diff| {d} (relative {rel:.3g}){note}" + "".join(f"\n  {p}" for p in problems))
        bad += bool(problems)
    if bad:
        sys.exit(f"{bad} file(s) differ")
    print(f"ok {len(files)} files")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    torch.set_num_threads(1)
    (write if sys.argv[1] == "write" else check)(sys.argv[2])
