#!/usr/bin/env python3
"""The PyTorch peer of anestar's language-model training: a llama2.c-architecture model, eager mode, CPU, fp32.

Model (llama2.c's):
  x = E[tokens]                                              token embedding E [vocab, dim]
  per layer:  x = x + Wo attn(rope(Wq n), rope(Wk n), Wv n),  n = RMSNorm(x; g1)
              x = x + W2 (silu(W1 n) * (W3 n)),               n = RMSNorm(x; g2)
  logits = RMSNorm(x; g) E^T                                 classifier tied to the embedding
  RMSNorm(v; g) = v / sqrt(mean(v^2) + 1e-5) * g
  attn: causal softmax(q k^T / sqrt(hd)) v per head; kv_heads key/value heads, head h reading kv head
        h // (heads / kv_heads) (grouped-query attention)
  rope: the adjacent pair (v[2i], v[2i+1]) of each head at position t is rotated by the angle
        t * theta^(-2i / hd), theta 10000
Init: every matrix normal(0, 0.02), the residual projections wo and w2 normal(0, 0.02 / sqrt(2 layers)),
gains ones (scripts/lib/lm.star's rule).

Training: each step draws `batch` offsets uniformly from [0, len(train) - seq - 1) (a generator seeded with
--seed), takes the seq + 1 tokens at each, and minimises the mean next-token cross-entropy. AdamW, betas --beta1 /
--beta2 (0.9/0.95), eps 1e-8, decoupled weight decay --wd (alias --weight-decay) on the matrices only (not the
gains); the learning rate rises linearly over --warmup steps to --lr (step i uses lr (i+1)/warmup), then follows a
cosine to --min-lr at the last step; the gradient's global L2 norm is clipped to --clip before each update (0: no
clipping). --dropout p (training only) drops the attention's and the FFN's outputs before their residual adds
(llama2.c's resid_dropout, as scripts/lib/lm.star does; not the attention probabilities).

These are scripts/train_lm.star's hyperparameters, under the same names (dashes for underscores; the script's
betas are fixed at 0.9/0.95). The peer's own defaults differ from the script's: lr 1e-3, warmup 20, min-lr lr/10,
no dropout.

Budget: --budget S trains for S seconds of wall time from the start of training (the model built and the data read;
validations during training included), as train_lm.star's `budget` does: after each step the steps that fit are
re-estimated from the run's own rate so far (seconds per step, validations included), leaving room for the final
validation (as long as the longest one during training, 0 without --eval-every), and the warmup and cosine are laid
again over that total, so the run ends inside the budget at min-lr. --steps is then ignored. A budget shorter than
the first step is an error. Not bit-reproducible: the total depends on the clock.

Validation: the mean cross-entropy over every token predicted by the non-overlapping windows of seq + 1 tokens of
the validation file (window j is val[j(seq+1) : (j+1)(seq+1)], a last partial window dropped). With --tokenizer (a
llama2.c tokenizer.bin) also val_bpb: bits per byte, the summed loss over ln 2 divided by the bytes the predicted
tokens stand for (a byte piece <0xXX> one byte, BOS and EOS none, any other piece its UTF-8 length).

The same start for two trainers: --write-start PREFIX writes this run's initial weights as a llama2.c model file
(version 0, the classifier shared: PREFIX.bin) and the offsets of its --steps batches (float64 .npy of [steps,
batch]: PREFIX.batches.npy), then exits without training; --init PREFIX.bin starts from those weights (any llama2.c
file of the given sizes) and --batches PREFIX.batches.npy trains on those offsets instead of drawing them. With both,
nothing of the run depends on --seed but dropout's masks; scripts/train_lm.star takes the same files as its init and
batches (bench/compare -same-start), so that the two trainers' losses differ by their arithmetic alone.

Token files are little-endian uint16 ids (llama2.c's and nanoGPT's .bin). Output is JSON lines: with --eval-every N
one {"step", "train_s", "val_loss"[, "val_bpb"]} line every N steps (evaluation time excluded from train_s), then
a final line {"peer": "pytorch-lm", "ms_per_step", "tokens_per_s", "train_loss", "val_loss", "val_bpb", ...}, which
also holds those points as val_curve: [[step, train_s, val_loss, val_bpb], ...]. ms_per_step is the median step
time after the first three steps; last_lr the learning rate of the last step; wall_s
is the training's wall time (validations during it included), which a --budget bounds.

  /usr/bin/python3 bench/peers/torch_lm.py --train D/train.bin --val D/val.bin --tokenizer D/tokenizer.bin \
      --vocab 1024 --dim 256 --layers 4 --heads 4 --seq 128 --batch 8 --steps 300 --threads 1

Needs PyTorch and numpy (Debian: apt-get install python3-torch python3-numpy).
"""
import argparse
import json
import math
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def rmsnorm(v, g):
    return v * torch.rsqrt(v.pow(2).mean(dim=-1, keepdim=True) + 1e-5) * g


def rope_angles(hd, seq, theta=10000.0):
    """cos and sin of t * theta^(-2i/hd) for positions t < seq and pairs i < hd/2, [seq, hd/2] each."""
    inv = theta ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.arange(seq, dtype=torch.float64)[:, None] * inv[None, :]
    return ang.cos().float(), ang.sin().float()


def rope(v, cos, sin):
    """Rotates the adjacent pairs of v [batch, seq, heads, hd]; cos and sin are [seq, 1, hd/2]."""
    ev, od = v[..., 0::2], v[..., 1::2]
    return torch.stack((ev * cos - od * sin, ev * sin + od * cos), dim=-1).flatten(-2)


class Model:
    """The parameters, by llama2.c's names, and the forward pass."""

    def __init__(self, a):
        self.a = a
        hd = a.dim // a.heads
        kv = a.kv_heads * hd
        small = 0.02 / math.sqrt(2 * a.layers)

        def normal(shape, std):
            return torch.empty(shape).normal_(0.0, std).requires_grad_()

        self.emb = normal((a.vocab, a.dim), 0.02)
        self.layers = []
        for _ in range(a.layers):
            self.layers.append({
                "g1": torch.ones(a.dim, requires_grad=True),
                "wq": normal((a.dim, a.dim), 0.02), "wk": normal((kv, a.dim), 0.02), "wv": normal((kv, a.dim), 0.02),
                "wo": normal((a.dim, a.dim), small),
                "g2": torch.ones(a.dim, requires_grad=True),
                "w1": normal((a.hidden, a.dim), 0.02), "w2": normal((a.dim, a.hidden), small),
                "w3": normal((a.hidden, a.dim), 0.02),
            })
        self.norm = torch.ones(a.dim, requires_grad=True)
        self.cos, self.sin = rope_angles(hd, a.seq)
        self.mask = torch.full((a.seq, a.seq), float("-inf")).triu(1)

    def params(self):
        yield self.emb
        for L in self.layers:
            yield from L.values()
        yield self.norm

    def forward(self, idx, dropout=0.0):
        """The logits; dropout > 0 (training) drops the attention's and the FFN's outputs before the residual adds."""
        a = self.a
        B, T = idx.shape
        nh, nkv, hd = a.heads, a.kv_heads, a.dim // a.heads
        cos, sin, mask = self.cos[:T, None, :], self.sin[:T, None, :], self.mask[:T, :T]
        x = F.embedding(idx, self.emb)
        for L in self.layers:
            n = rmsnorm(x, L["g1"])
            q = rope(F.linear(n, L["wq"]).view(B, T, nh, hd), cos, sin).transpose(1, 2)
            k = rope(F.linear(n, L["wk"]).view(B, T, nkv, hd), cos, sin).transpose(1, 2)
            v = F.linear(n, L["wv"]).view(B, T, nkv, hd).transpose(1, 2)
            if nkv != nh:
                k = k.repeat_interleave(nh // nkv, dim=1)
                v = v.repeat_interleave(nh // nkv, dim=1)
            p = torch.softmax(q @ k.transpose(-1, -2) * (1.0 / math.sqrt(hd)) + mask, dim=-1)
            o = F.linear((p @ v).transpose(1, 2).reshape(B, T, a.dim), L["wo"])
            x = x + (F.dropout(o, dropout) if dropout > 0 else o)
            n = rmsnorm(x, L["g2"])
            y = F.linear(F.silu(F.linear(n, L["w1"])) * F.linear(n, L["w3"]), L["w2"])
            x = x + (F.dropout(y, dropout) if dropout > 0 else y)
        return F.linear(rmsnorm(x, self.norm), self.emb)


def llama2_arrays(m):
    """The arrays of a version 0 llama2.c file in its order, the classifier shared."""
    L = m.layers
    out = [m.emb] + [torch.stack([l[k] for l in L]) for k in ("g1", "wq", "wk", "wv", "wo", "g2", "w1", "w2", "w3")]
    return out + [m.norm, m.cos, m.sin]


def write_llama2(m, a, path):
    """Writes m's weights as a llama2.c model file (version 0: a 7-int header, the arrays in order, RoPE tables)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<7i", a.dim, a.hidden, a.layers, a.heads, a.kv_heads, a.vocab, a.seq))
        for t in llama2_arrays(m):
            f.write(t.detach().contiguous().numpy().astype("<f4").tobytes())


@torch.no_grad()
def read_llama2(m, a, path):
    """Copies the weights of a version 0 llama2.c file of a's sizes (classifier shared) into m."""
    data = open(path, "rb").read()
    head = struct.unpack_from("<7i", data) if len(data) >= 28 else ()
    want = (a.dim, a.hidden, a.layers, a.heads, a.kv_heads, a.vocab)
    if head[:6] != want or head[6] < a.seq:
        sys.exit("torch_lm: --init %s: header %s, want dim, hidden, layers, heads, kv-heads, vocab %s (vocab positive: "
                 "the classifier shared) and a max_seq_len of at least --seq %d" % (path, head, want, a.seq))
    need = 28 + 4 * (sum(p.numel() for p in m.params()) + 2 * head[6] * (a.dim // a.heads // 2))
    if len(data) != need:
        sys.exit("torch_lm: --init %s: %d bytes, its header's sizes need %d (a separate classifier is not read)"
                 % (path, len(data), need))
    off = 28

    def take(t):
        nonlocal off
        t.copy_(torch.from_numpy(np.frombuffer(data, dtype="<f4", count=t.numel(), offset=off).copy()).view(t.shape))
        off += 4 * t.numel()

    take(m.emb)
    for k in ("g1", "wq", "wk", "wv", "wo", "g2", "w1", "w2", "w3"):
        for l in m.layers:
            take(l[k])
    take(m.norm)


def read_batches(path, a, n):
    """The offsets of --batches: [steps, batch] values in [0, n - seq - 1) for n training tokens."""
    b = np.load(path)
    if b.ndim != 2 or b.shape[1] != a.batch or b.shape[0] < a.steps:
        sys.exit("torch_lm: --batches %s: shape %s, want [at least --steps %d, --batch %d]" % (path, b.shape, a.steps, a.batch))
    if b.min() < 0 or b.max() >= n - a.seq - 1:
        sys.exit("torch_lm: --batches %s: offsets must lie in [0, %d), the training tokens less seq + 1" % (path, n - a.seq - 1))
    return torch.from_numpy(b.astype(np.int64))


def read_tokens(path):
    return torch.from_numpy(np.fromfile(path, dtype="<u2").astype(np.int64))


def token_bytes(path):
    """The bytes each id of a llama2.c tokenizer.bin stands for (see the module doc)."""
    data = open(path, "rb").read()
    off, out = 4, []
    while off + 8 <= len(data):
        _score, n = struct.unpack_from("<fi", data, off)
        piece = data[off + 8:off + 8 + n]
        off += 8 + n
        i = len(out)
        if i in (1, 2):  # BOS, EOS
            out.append(0)
        elif len(piece) == 6 and piece[:3] == b"<0x" and piece[5:] == b">":
            out.append(1)
        else:
            out.append(len(piece))
    return torch.tensor(out, dtype=torch.float64)


@torch.no_grad()
def validate(m, val, seq, nbytes):
    """(val_loss, val_bpb or None) over the non-overlapping windows of seq + 1 tokens."""
    w = len(val) // (seq + 1)
    if w == 0:
        sys.exit("torch_lm: the validation file holds fewer than seq + 1 = %d tokens" % (seq + 1))
    windows = val[:w * (seq + 1)].view(w, seq + 1)
    total = 0.0
    for i in range(0, w, 16):
        b = windows[i:i + 16]
        logits = m.forward(b[:, :-1])
        total += F.cross_entropy(logits.flatten(0, 1), b[:, 1:].flatten(), reduction="sum").item()
    count = w * seq
    loss = total / count
    if nbytes is None:
        return loss, None
    return loss, total / math.log(2) / nbytes[windows[:, 1:].flatten()].sum().item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", required=True, help="training tokens (uint16 .bin)")
    ap.add_argument("--val", required=True, help="validation tokens (uint16 .bin)")
    ap.add_argument("--tokenizer", default="", help="llama2.c tokenizer.bin of the tokens: also report val_bpb")
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=0, help="key/value heads; 0 = heads")
    ap.add_argument("--hidden", type=int, default=0, help="FFN width; 0 = llama2.c's rule, 2/3 of 4 dim rounded up to a multiple of 32")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--budget", type=float, default=0,
                    help="seconds of wall time to train, the schedule laid over the steps that fit (--steps ignored); 0 = none")
    ap.add_argument("--lr", type=float, default=1e-3, help="peak learning rate")
    ap.add_argument("--min-lr", type=float, default=-1, help="the cosine's floor; negative = lr/10")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--wd", "--weight-decay", dest="wd", type=float, default=0.1, help="AdamW weight decay, on matrices")
    ap.add_argument("--beta1", type=float, default=0.9, help="AdamW's first-moment decay")
    ap.add_argument("--beta2", type=float, default=0.95, help="AdamW's second-moment decay")
    ap.add_argument("--clip", type=float, default=1.0, help="gradient global-norm limit; 0 = none")
    ap.add_argument("--dropout", type=float, default=0.0, help="dropout of the attention and FFN outputs in training")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=0, help="torch threads; 0 = PyTorch's default")
    ap.add_argument("--eval-every", type=int, default=0, help="validate every N steps too")
    ap.add_argument("--init", default="", help="start from this llama2.c model file's weights (see the module doc)")
    ap.add_argument("--batches", default="", help="train on the offsets of this .npy [steps, batch] instead of drawing them")
    ap.add_argument("--write-start", default="", metavar="PREFIX",
                    help="write PREFIX.bin (the initial weights) and PREFIX.batches.npy (the offsets of --steps batches), then exit")
    a = ap.parse_args()
    a.kv_heads = a.kv_heads or a.heads
    a.hidden = a.hidden or 32 * -(-(8 * a.dim // 3) // 32)
    a.min_lr = a.lr / 10 if a.min_lr < 0 else a.min_lr
    if not 0 <= a.dropout < 1:
        ap.error("--dropout %g: must lie in [0, 1)" % a.dropout)
    if not (0 <= a.beta1 < 1 and 0 <= a.beta2 < 1):
        ap.error("--beta1 %g, --beta2 %g: each must lie in [0, 1)" % (a.beta1, a.beta2))
    if not (0 < a.lr <= 10 and 0 < a.min_lr <= 10):
        ap.error("--lr %g, --min-lr %g: each must lie in (0, 10]" % (a.lr, a.min_lr))
    if a.warmup < 0 or a.steps < 0 or a.wd < 0 or a.clip < 0 or not 0 <= a.budget < 1e12:
        ap.error("--warmup, --steps, --wd, --clip and --budget may not be negative")
    if a.write_start and (a.init or a.batches or a.budget):
        ap.error("--write-start writes a start: it takes neither --init, --batches nor --budget")
    if a.batches and a.budget:
        ap.error("--batches holds the offsets of --steps steps: it takes no --budget")
    if a.dim % a.heads or a.heads % a.kv_heads or (a.dim // a.heads) % 2:
        ap.error("need dim a multiple of heads, heads of kv-heads, and an even head size")
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, val = read_tokens(a.train), read_tokens(a.val)
    if len(train) < a.seq + 2:
        ap.error("%s holds %d tokens: fewer than seq + 2" % (a.train, len(train)))
    if int(max(train.max(), val.max())) >= a.vocab:
        ap.error("the token files hold ids of --vocab %d or more" % a.vocab)
    nbytes = token_bytes(a.tokenizer) if a.tokenizer else None

    m = Model(a)
    params = list(m.params())
    if a.init:
        read_llama2(m, a, a.init)
    gen = torch.Generator().manual_seed(a.seed)
    span = torch.arange(a.seq + 1)
    if a.write_start:
        write_llama2(m, a, a.write_start + ".bin")
        offs = torch.stack([torch.randint(0, len(train) - a.seq - 1, (a.batch,), generator=gen) for _ in range(a.steps)])
        np.save(a.write_start + ".batches.npy", offs.numpy().astype(np.float64).reshape(a.steps, a.batch))
        return
    batches = read_batches(a.batches, a, len(train)) if a.batches else None
    opt = torch.optim.AdamW([{"params": [p for p in params if p.dim() == 2], "weight_decay": a.wd},
                             {"params": [p for p in params if p.dim() != 2], "weight_decay": 0.0}],
                            lr=a.lr, betas=(a.beta1, a.beta2), eps=1e-8)

    def lr_at(i, total):
        """The warmup, then the cosine to min-lr over total - warmup steps (scripts/train_lm.star's schedule)."""
        if i < a.warmup:
            return a.lr * (i + 1) / a.warmup
        frac = min(1.0, (i - a.warmup) / max(1, total - a.warmup))
        return a.min_lr + (a.lr - a.min_lr) * 0.5 * (1.0 + math.cos(math.pi * frac))

    # With a budget, total is the steps that fit, re-estimated after every step (train_lm.star's budget_estimate):
    # the seconds per step so far, validations included, into the time left less the final validation's (end).
    total = 1 if a.budget else a.steps
    wall0, end = time.perf_counter(), 0.0
    curve, step_s, train_s, step, loss, last_lr = [], [], 0.0, 0, float("nan"), None
    while step < total:
        t0 = time.perf_counter()
        if batches is not None:
            offs = batches[step]
        else:
            offs = torch.randint(0, len(train) - a.seq - 1, (a.batch,), generator=gen)
        b = train[offs[:, None] + span]
        logits = m.forward(b[:, :-1], a.dropout)
        lo = F.cross_entropy(logits.flatten(0, 1), b[:, 1:].flatten())
        lo.backward()
        if a.clip > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip)
        last_lr = lr_at(step, total)
        for g in opt.param_groups:
            g["lr"] = last_lr
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss = lo.item()
        dt = time.perf_counter() - t0
        step_s.append(dt)
        train_s += dt
        step += 1
        if a.budget:
            if step == 1 and dt > a.budget:
                sys.exit("torch_lm: --budget %g s is shorter than one step (%.1f s): give a budget of several steps"
                         % (a.budget, dt))
            spent = time.perf_counter() - wall0
            total = step + max(0, int((a.budget - spent - end) / (spent / step)))
        if a.eval_every and step % a.eval_every == 0 and (step < total or not a.budget):
            te = time.perf_counter()
            vl, vb = validate(m, val, a.seq, nbytes)
            end = max(end, time.perf_counter() - te)
            curve.append([step, round(train_s, 2), round(vl, 4), None if vb is None else round(vb, 4)])
            print(json.dumps({"step": step, "train_s": round(train_s, 2), "val_loss": round(vl, 4),
                              **({"val_bpb": round(vb, 4)} if vb is not None else {})}), flush=True)
    wall_s = time.perf_counter() - wall0
    vl, vb = validate(m, val, a.seq, nbytes)
    steady = sorted(step_s[3:] or step_s)
    ms = 1e3 * steady[len(steady) // 2] if steady else 0.0  # 0 when nothing was trained
    out = {"peer": "pytorch-lm", "version": torch.__version__, "threads": torch.get_num_threads(),
           "params": sum(p.numel() for p in params), "steps": step, "train_s": round(train_s, 2),
           "wall_s": round(wall_s, 2), "budget": a.budget, "last_lr": last_lr,
           "ms_per_step": round(ms, 2), "tokens_per_s": round(a.batch * a.seq * 1e3 / ms, 1) if ms else 0.0,
           "train_loss": round(loss, 4) if step else None, "val_loss": round(vl, 4),
           "val_bpb": None if vb is None else round(vb, 4)}
    if curve:
        out["val_curve"] = curve
    print(json.dumps(out))


if __name__ == "__main__":
    main()
