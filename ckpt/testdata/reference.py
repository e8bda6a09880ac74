#!/usr/bin/python3
"""Reference data for package ckpt, made and checked with the safetensors Python library.

    reference.py write OUT   writes the sample checkpoint with safetensors.torch.save_file
    reference.py check FILE  loads FILE with safetensors.torch.load_file and safe_open and
                             checks that it holds exactly the sample checkpoint

The sample is built from the same plain values as sampleFile in sample_test.go: one tensor of
each dtype that safetensors and PyTorch share, an empty and a scalar tensor, one metadata entry.
reference.safetensors was written by `reference.py write` with safetensors 0.3.3 (the Python
library, built from its source against Debian's Rust crates) and PyTorch 1.13 (Debian's
python3-torch); see README.md.
"""
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

METADATA = {"note": 'reference "sample"\n'}


def sample():
    return {
        "f32": torch.arange(6, dtype=torch.float32).reshape(2, 3) * 0.25 - 1,
        "f16": torch.tensor([1, -2.5, 65504, 2.0**-24], dtype=torch.float16),
        "bf16": torch.tensor([[1, -0.5], [3.140625, 256]], dtype=torch.bfloat16),
        "f64": torch.tensor([0.1, -1e300, 5e-324], dtype=torch.float64),
        "i8": torch.tensor([-128, -1, 0, 127], dtype=torch.int8),
        "i16": torch.tensor([-32768, 1, 32767], dtype=torch.int16),
        "i32": torch.tensor([-(2**31), 2**31 - 1], dtype=torch.int32),
        "i64": torch.tensor([-(2**63), 2**63 - 1], dtype=torch.int64),
        "u8": torch.tensor([0, 1, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, False, True]),
        "empty": torch.zeros((0, 3), dtype=torch.float32),
        "scalar": torch.tensor(42, dtype=torch.int64),
    }


def check(path):
    want = sample()
    got = load_file(path)
    if sorted(got) != sorted(want):
        sys.exit(f"tensors {sorted(got)}, want {sorted(want)}")
    for name, w in want.items():
        g = got[name]
        if g.dtype != w.dtype or g.shape != w.shape or not torch.equal(g, w):
            sys.exit(f"{name}: got {g.dtype}{list(g.shape)} {g}, want {w.dtype}{list(w.shape)} {w}")
    with safe_open(path, framework="pt") as f:
        if f.metadata() != METADATA:
            sys.exit(f"metadata {f.metadata()}, want {METADATA}")
    print(f"ok {len(got)} tensors")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit(__doc__)
    if sys.argv[1] == "write":
        save_file(sample(), sys.argv[2], metadata=METADATA)
    else:
        check(sys.argv[2])
