#!/usr/bin/env python3
"""Extracts, from the reference MIL generators, the op sequence each one emits.

Usage: extract_reference_ops.py train_large.m mil_dynamic.h > reference_ops.txt

Each output line is "GENERATOR RESULT KIND OPNAME" for one op, in emission order. The CONV_CONST macro
and calls of gen_dyn_matmul (prefix "mm") are expanded. mil_dynamic.h lost its line breaks and its <...>
spans; the patterns below do not need them.
"""
import re
import sys

OP = re.compile(r'(?:tensor|>|bool|fp16|fp32|int32|string)\s+([%\w]+) = (\w+)\(.*?\[name=string\(\\"([%\w]+)\\"\)')
FUNC = re.compile(r'static NSString \*(gen_\w+)\((?:void|int ic, int oc, int seq)?\)\s*\{(.*?)\n?\s*return (m|gen_dyn_matmul_mil\([^)]*\));', re.S)
HELPER = re.compile(r'static void gen_dyn_matmul\(.*?\)\s*\{(.*?)\}\s*//', re.S)


def ops(body):
    out = []
    # Split on appends so that each statement is matched on its own.
    for stmt in re.split(r'\[m append', body):
        if '@CONV_CONST' in stmt:
            out += conv_const
            continue
        m = OP.search(stmt)
        if m:
            out.append(m.groups())
        call = re.search(r'gen_dyn_matmul\(m, "(\w+)"', stmt)
        if call:
            out += [(r.replace('%s', call.group(1)), k, n.replace('%s', call.group(1))) for r, k, n in dyn]
    return out


large = open(sys.argv[1]).read()
dynamic = open(sys.argv[2]).read()
macro = re.search(r'#define CONV_CONST(.*?)\n\n', large, re.S).group(1)
conv_const = [m.groups() for m in OP.finditer(macro)]
dyn = []
helper = HELPER.search(dynamic)
dyn = ops(helper.group(1))

bodies = {}
for name, src in (("train_large", large), ("mil_dynamic", dynamic)):
    for f in FUNC.finditer(src):
        gen, body, ret = f.groups()
        if ret != 'm':
            body = bodies['gen_dyn_matmul_mil']
        bodies[gen] = body
        for r, k, n in ops(body):
            print(name + ":" + gen, r, k, n)
