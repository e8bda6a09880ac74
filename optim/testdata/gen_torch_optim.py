"""Generates torch_optim.json: parameter trajectories of torch.optim optimizers.

Run with /usr/bin/python3 (needs torch and numpy); the Go tests read the JSON
and need no Python. Every case starts from the same weights and applies the
same fixed gradient sequence (the gradient does not depend on the weights, so
the trajectory is a pure function of the update rule).
"""
import json

import numpy as np
import torch

rng = np.random.default_rng(20240611)
N, STEPS = 6, 5
w0 = rng.normal(size=N).astype(np.float32)
grads = rng.normal(size=(STEPS, N)).astype(np.float32)

cases = [
    ("sgd", dict(lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("momentum", dict(lr=0.05, beta=0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    ("nesterov", dict(lr=0.05, beta=0.9), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    ("adagrad", dict(lr=0.1, eps=1e-10), lambda p: torch.optim.Adagrad(p, lr=0.1, eps=1e-10)),
    ("rmsprop", dict(lr=0.01, rho=0.9, eps=1e-8), lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, eps=1e-8)),
    ("adam", dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8),
     lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8)),
    ("adamw", dict(lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.1),
     lambda p: torch.optim.AdamW(p, lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.1)),
]

out = {"torch": torch.__version__, "w0": w0.tolist(), "grads": grads.tolist(), "cases": []}
for name, params, make in cases:
    w = torch.tensor(w0.copy(), requires_grad=True)
    opt = make([w])
    traj = []
    for g in grads:
        opt.zero_grad()
        w.grad = torch.tensor(g)
        opt.step()
        traj.append(w.detach().numpy().astype(float).tolist())
    out["cases"].append({"name": name, "params": params, "trajectory": traj})

with open("torch_optim.json", "w") as f:
    json.dump(out, f, indent=1)
