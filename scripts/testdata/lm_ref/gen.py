#!/usr/bin/env python3
"""Writes the reference of scripts/lm_ref_test.go: a tiny llama2.c-architecture model in PyTorch (float64),
written here from the formulas, independent of anestar's code.

Model: token embedding; layers x (RMSNorm -> causal attention with RoPE on adjacent pairs and grouped kv heads
-> residual -> RMSNorm -> SwiGLU FFN -> residual); final RMSNorm; classifier tied to the embedding.
RMSNorm eps 1e-5, RoPE theta 10000, angle pos * theta^(-2i/head_dim) on the pair (x[2i], x[2i+1]).

Writes (float32 .npy): tokens.npy (the token stream, also as tokens.bin, uint16), offsets.npy ([STEPS+1, BATCH] window starts),
w_<name>.npy (initial weights, anestar's names), logits.npy (sequence 0 of batch 0), loss.npy (batch 0's mean
loss), g_<name>.npy (batch 0's gradients), curve.npy (the losses of STEPS AdamW steps on batches 1..STEPS, each
before its update: betas 0.9/0.95, eps 1e-8, weight decay on matrices only, global-norm clip, linear warmup then
cosine to min_lr), and final_<name>.npy (the weights after the steps: the curve alone hardly sees the weight decay,
3e-4 of a weight per step here, well inside its tolerance).

  /usr/bin/python3 scripts/testdata/lm_ref/gen.py scripts/testdata/lm_ref

With a variant of docs/model-variants.md as the second argument (qk_norm: q and k RMS-normalised per head,
no gain, eps 1e-5, before RoPE; parallel: x + attn(h) + ffn(h) with h = rmsnorm(x, rms1), rms2 unused; gpt2:
LayerNorm without bias (eps 1e-5) for every RMSNorm, gains rms1, rms2 and norm; no RoPE; positions learned,
x = emb[ids] + wpe[:T]; FFN w2 gelu_tanh(w1 h), no w3) it writes only loss.npy and g_<name>.npy (rms2's zero
in a parallel block) of the same tokens and weights, and gpt2's w_wpe.npy (drawn from its own generator, the
other weights the base's, w3 left out):

  /usr/bin/python3 scripts/testdata/lm_ref/gen.py scripts/testdata/lm_ref/qk_norm qk_norm
"""
import math, os, sys

import numpy as np
import torch

DIM, LAYERS, HEADS, KV_HEADS, VOCAB, SEQ, HIDDEN = 64, 2, 4, 2, 300, 32, 192
BATCH, STEPS, NTOK = 2, 10, 4000
LR, MIN_LR, WARMUP, WD, CLIP = 3e-3, 3e-4, 3, 0.1, 1.0
torch.manual_seed(7)
HD = DIM // HEADS
KV = KV_HEADS * HD


def rmsnorm(x, w):  # x [..., dim]; in the gpt2 variant LayerNorm without bias
    if VARIANT == "gpt2":
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, None, 1e-5)
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w


def headnorm(x):  # x [T, heads, HD]: RMS per head, no gain
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5)


def rotate(x):  # x [T, heads, HD]; pairs (2i, 2i+1) rotate by t * theta^(-2i/HD)
    T = x.shape[0]
    i = torch.arange(HD // 2, dtype=torch.float64)
    ang = torch.arange(T, dtype=torch.float64)[:, None] * (10000.0 ** (-2 * i / HD))[None, :]
    c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
    e, o = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = e * c - o * s
    out[..., 1::2] = e * s + o * c
    return out


def forward(W, ids):  # ids [T] -> logits [T, VOCAB]
    T = len(ids)
    x = W["emb"][ids] + (W["wpe"][:T] if VARIANT == "gpt2" else 0)
    mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), 1)
    for l in range(LAYERS):
        p = lambda n: W["L%d.%s" % (l, n)]
        h = rmsnorm(x, p("rms1"))
        q, k = (h @ p("wq").T).view(T, HEADS, HD), (h @ p("wk").T).view(T, KV_HEADS, HD)
        if VARIANT == "qk_norm":
            q, k = headnorm(q), headnorm(k)
        if VARIANT != "gpt2":
            q, k = rotate(q), rotate(k)
        v = (h @ p("wv").T).view(T, KV_HEADS, HD)
        outs = []
        for hh in range(HEADS):
            g = hh // (HEADS // KV_HEADS)
            a = torch.softmax(q[:, hh] @ k[:, g].T / math.sqrt(HD) + mask, -1)
            outs.append(a @ v[:, g])
        o = torch.cat(outs, -1) @ p("wo").T
        if VARIANT != "parallel":
            x = x + o
            h = rmsnorm(x, p("rms2"))
        a1 = h @ p("w1").T
        if VARIANT == "gpt2":
            x = x + torch.nn.functional.gelu(a1, approximate="tanh") @ p("w2").T
            continue
        x = x + (o if VARIANT == "parallel" else 0) + (a1 * torch.sigmoid(a1) * (h @ p("w3").T)) @ p("w2").T
    return rmsnorm(x, W["norm"]) @ W["emb"].T


def batch_loss(W, tokens, offs):
    tot = 0
    for o in offs:
        w = tokens[o:o + SEQ + 1]
        tot = tot + torch.nn.functional.cross_entropy(forward(W, w[:-1]), w[1:], reduction="sum")
    return tot / (len(offs) * SEQ)


def lr_at(step):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    r = min(1.0, (step - WARMUP) / max(1, STEPS - WARMUP))
    return MIN_LR + (LR - MIN_LR) * (1 + math.cos(math.pi * r)) / 2


VARIANT = sys.argv[2] if len(sys.argv) > 2 else ""


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    save = lambda n, a: np.save(os.path.join(out, n + ".npy"), np.asarray(a, dtype=np.float32))
    # A learnable stream: mostly next = (3 prev + 7) mod VOCAB, a random token one time in five.
    noise, rnd = torch.rand(NTOK), torch.randint(0, VOCAB, (NTOK,))
    tokens = torch.zeros(NTOK, dtype=torch.long)
    for i in range(1, NTOK):
        tokens[i] = rnd[i] if noise[i] < 0.2 else (3 * tokens[i - 1] + 7) % VOCAB
    offsets = torch.randint(0, NTOK - SEQ - 1, (STEPS + 1, BATCH))
    W = {"emb": torch.randn(VOCAB, DIM) * 0.02}
    for l in range(LAYERS):
        for n, shape, std in [("rms1", [DIM], 0), ("wq", [DIM, DIM], 0.02), ("wk", [KV, DIM], 0.02), ("wv", [KV, DIM], 0.02),
                              ("wo", [DIM, DIM], 0.02 / math.sqrt(2 * LAYERS)), ("rms2", [DIM], 0),
                              ("w1", [HIDDEN, DIM], 0.02), ("w2", [DIM, HIDDEN], 0.02 / math.sqrt(2 * LAYERS)), ("w3", [HIDDEN, DIM], 0.02)]:
            W["L%d.%s" % (l, n)] = 1 + 0.1 * torch.randn(shape) if std == 0 else torch.randn(shape) * std * 5
    W["norm"] = 1 + 0.1 * torch.randn(DIM)
    if VARIANT == "gpt2":
        for l in range(LAYERS):
            del W["L%d.w3" % l]
        W["wpe"] = torch.randn(SEQ, DIM, generator=torch.Generator().manual_seed(9)) * 0.1
    W = {k: v.to(torch.float32).to(torch.float64).requires_grad_() for k, v in W.items()}  # exactly the saved fp32 values
    if VARIANT:
        loss = batch_loss(W, tokens, offsets[0].tolist())
        loss.backward()
        save("loss", [loss.item()])
        if VARIANT == "gpt2":
            save("w_wpe", W["wpe"].detach())
        for k, v in W.items():
            save("g_" + k, v.grad if v.grad is not None else torch.zeros_like(v))
        print(VARIANT, "loss", loss.item())
        return
    save("tokens", tokens)
    tokens.numpy().astype("<u2").tofile(os.path.join(out, "tokens.bin"))  # the same, as a llama2.c/nanoGPT token file
    save("offsets", offsets)
    for k, v in W.items():
        save("w_" + k, v.detach())
    save("logits", forward(W, tokens[offsets[0, 0]:offsets[0, 0] + SEQ]).detach())
    loss = batch_loss(W, tokens, offsets[0].tolist())
    loss.backward()
    save("loss", [loss.item()])
    for k, v in W.items():
        save("g_" + k, v.grad)
        v.grad = None
    decay = [v for k, v in W.items() if v.dim() >= 2]
    nodecay = [v for k, v in W.items() if v.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": nodecay, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.95), eps=1e-8)
    curve = []
    for step in range(STEPS):
        loss = batch_loss(W, tokens, offsets[step + 1].tolist())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(W.values()), CLIP)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.step()
        opt.zero_grad()
        curve.append(loss.item())
    save("curve", curve)
    for k, v in W.items():
        save("final_" + k, v.detach())
    print("loss", curve[0], "->", curve[-1])


if __name__ == "__main__":
    main()
