#!/usr/bin/env python3
"""The PyTorch peer of scripts/train_layer.star: one transformer layer trained in eager mode on the CPU, fp32.

The model and task are the script's (scripts/lib/model.star):
  h   = x + Wo attn(RMSNorm(x; g1))            causal multi-head attention, softmax(q k^T / sqrt(hd) + mask) v
  out = h + W2 (silu(W1 n) * (W3 n)), n = RMSNorm(h; g2)
  RMSNorm(v; g) = v / sqrt(mean(v^2) + 1e-5) * g, per position over the channels
  loss = mean((out - y)^2) with y[c, t] = 0.1 sin((c*seq + t) * 0.03 + 1), x uniform in [-0.1, 0.1)
Weights are uniform in [-s, s): s = 1/sqrt(dim) for wq, wk, wv, wo, w2 and 1/sqrt(hidden) for w1, w3; gains
ones. Gradients accumulate over `accum` steps (each step's loss divided by accum, so that the update sees the
batch's mean gradient, as the script's does), then one Adam update (lr 1e-3, betas 0.9/0.999, eps 1e-8).

Activations are kept position-major ([seq, dim], PyTorch's natural layout for F.linear); the script keeps them
channel-first, which changes no arithmetic. After `warmup` untimed steps, `steps` steps are timed; the figure is
their mean wall time, the optimizer updates included. Prints one JSON line:
  {"peer": "pytorch", "ms_per_step": ..., "gflops": ..., "loss": ..., ...}

  /usr/bin/python3 bench/peers/torch_layer.py --dim 768 --hidden 2048 --heads 12 --seq 512 --steps 20 --threads 1

Needs PyTorch (Debian: apt-get install python3-torch).
"""
import argparse
import json
import math
import time

import torch
import torch.nn.functional as F


def rmsnorm(v, g):
    return v * torch.rsqrt(v.pow(2).mean(dim=1, keepdim=True) + 1e-5) * g


class Layer:
    """The layer's nine tensors and its forward pass."""

    def __init__(self, dim, hidden, heads):
        self.dim, self.hidden, self.heads = dim, hidden, heads

        def uniform(rows, cols, s):
            return ((torch.rand(rows, cols) * 2.0 - 1.0) * s).requires_grad_()

        sd, sh = 1.0 / math.sqrt(dim), 1.0 / math.sqrt(hidden)
        self.w = {
            "wq": uniform(dim, dim, sd), "wk": uniform(dim, dim, sd), "wv": uniform(dim, dim, sd),
            "wo": uniform(dim, dim, sd), "w1": uniform(hidden, dim, sh), "w2": uniform(dim, hidden, sd),
            "w3": uniform(hidden, dim, sh),
            "rms1": torch.ones(dim, requires_grad=True), "rms2": torch.ones(dim, requires_grad=True),
        }

    def forward(self, x, bias):
        w, seq, nh = self.w, x.shape[0], self.heads
        hd = self.dim // nh
        n1 = rmsnorm(x, w["rms1"])

        def split(t):  # [seq, dim] -> [heads, seq, hd]
            return t.reshape(seq, nh, hd).permute(1, 0, 2)

        q, k, v = split(F.linear(n1, w["wq"])), split(F.linear(n1, w["wk"])), split(F.linear(n1, w["wv"]))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(hd)) + bias
        a = torch.matmul(torch.softmax(scores, dim=-1), v).permute(1, 0, 2).reshape(seq, self.dim)
        h = x + F.linear(a, w["wo"])
        n2 = rmsnorm(h, w["rms2"])
        return h + F.linear(F.silu(F.linear(n2, w["w1"])) * F.linear(n2, w["w3"]), w["w2"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dim", type=int, default=768, help="model width")
    ap.add_argument("--hidden", type=int, default=2048, help="FFN width")
    ap.add_argument("--heads", type=int, default=12, help="attention heads")
    ap.add_argument("--seq", type=int, default=512, help="sequence length")
    ap.add_argument("--steps", type=int, default=20, help="timed training steps")
    ap.add_argument("--warmup", type=int, default=3, help="untimed steps first")
    ap.add_argument("--accum", type=int, default=10, help="steps per Adam update")
    ap.add_argument("--threads", type=int, default=0, help="torch threads; 0 = PyTorch's default")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    if a.dim % a.heads:
        ap.error("--dim %d is not a multiple of --heads %d" % (a.dim, a.heads))
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    D, S = a.dim, a.seq
    layer = Layer(D, a.hidden, a.heads)
    x = torch.rand(S, D) * 0.2 - 0.1
    c = torch.arange(D, dtype=torch.float64).unsqueeze(0)
    t = torch.arange(S, dtype=torch.float64).unsqueeze(1)
    y = (0.1 * torch.sin((c * S + t) * 0.03 + 1.0)).float()  # y[t, c]: the script's y[c, t], transposed
    bias = torch.full((S, S), float("-inf")).triu(1)  # the causal mask
    opt = torch.optim.Adam(list(layer.w.values()), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)

    n = [0]

    def step():
        loss = F.mse_loss(layer.forward(x, bias), y)
        (loss / a.accum).backward()  # the batch's mean gradient, as the script takes it
        n[0] += 1
        if n[0] % a.accum == 0:
            opt.step()
            opt.zero_grad()
        return loss.item()

    for _ in range(a.warmup):
        step()
    t0 = time.perf_counter()
    loss = float("nan")
    for _ in range(a.steps):
        loss = step()
    ms = (time.perf_counter() - t0) * 1e3 / max(a.steps, 1)
    H, nh = a.hidden, a.heads
    fwd = 4 * 2 * D * D * S + 3 * 2 * D * H * S  # the script's FLOP accounting (scripts/lib/model.star)
    total = 3 * fwd + 2 * nh * 5 * S * S * (D // nh)
    print(json.dumps({"peer": "pytorch", "version": torch.__version__, "threads": torch.get_num_threads(),
                      "dim": D, "hidden": H, "heads": nh, "seq": S, "steps": a.steps, "accum": a.accum,
                      "ms_per_step": round(ms, 2), "gflops": round(total / ms / 1e6, 1), "loss": loss}))


if __name__ == "__main__":
    main()
