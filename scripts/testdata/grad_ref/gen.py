#!/usr/bin/env python3
"""Writes the reference of scripts/grad_test.go: the forward of scripts/grad.star, written here from its
formulas in PyTorch (float64), and its gradients by autograd.

  h = w @ x; s = h[0:4]; g = s * sigmoid(s); p = softmax(g, -1); r = sum(p * s, rows)
  a = r + sqrt(h * h + 1); y = (a + 2) ** 2;  L = sum(y * dy)

Writes (float32 .npy): x [8, 32], w [8, 8], dy [8, 32], and dx, dw (float64 gradients stored as float32).

  /usr/bin/python3 scripts/testdata/grad_ref/gen.py scripts/testdata/grad_ref
"""
import os, sys

import numpy as np
import torch

torch.manual_seed(3)
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
x = (torch.randn(8, 32, dtype=torch.float64) * 0.5).float().double().requires_grad_()
w = (torch.randn(8, 8, dtype=torch.float64) * 0.5).float().double().requires_grad_()
dy = torch.randn(8, 32, dtype=torch.float64).float().double()

h = w @ x
s = h[0:4]
g = s * torch.sigmoid(s)
p = torch.softmax(g, dim=-1)
r = (p * s).sum(dim=0, keepdim=True)
a = r + (h * h + 1) ** 0.5
y = (a + 2) ** 2
(y * dy).sum().backward()

for name, t in [("x", x), ("w", w), ("dy", dy), ("dx", x.grad), ("dw", w.grad), ("y", y)]:
    np.save(os.path.join(out, name + ".npy"), t.detach().numpy().astype(np.float32))
