#!/usr/bin/env bash
# llama2_check.sh MODEL.bin RUN [TOKENIZER.bin]: a real llama2.c model (Karpathy's stories260K, say) through
# train_lm.star and sample.star, checked against PyTorch and llama2.c's run.c:
#
#   1. token data from the model's own distribution: RUN (a run.c built outside this repository) samples
#      stories at temperature 1, top-p 0.9; the stories that fill a whole window (BOS and seq tokens) are
#      kept, 90 % training, 10 % validation, so every validation window starts at a story's BOS;
#   2. train_lm.star --set init=MODEL --set eval_only=True, no sizes given (the header's seq), in fp16
#      and fp32, against the float64 PyTorch forward of ckpt/testdata/llama2/gen.py on the same windows;
#   3. 10 steps of fine-tuning from MODEL, exported; RUN and sample.star write 100 greedy tokens from
#      the export, which must be the same bytes.
#
# The data is sampled through a placeholder vocabulary (piece i is "i ", so run.c prints ids); without
# TOKENIZER that vocabulary serves the checks too, which then compare ids: what any pieces would spell.
# Needs /usr/bin/python3 with torch and numpy. Work files go to a temporary folder, printed at the end.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 MODEL.bin RUN [TOKENIZER.bin]" >&2; exit 2; }
model=$(realpath "$1"); run=$(realpath "$2"); tok=${3:+$(realpath "$3")}
root=$(cd "$(dirname "$0")/.." && pwd); py=/usr/bin/python3
w=$(mktemp -d)
(cd "$root" && go build -o "$w/anestar" ./cmd/anestar)
cd "$w"
read -r vocab seq < <($py -c "import struct,sys; h = struct.unpack('7i', open(sys.argv[1],'rb').read(28)); print(abs(h[5]), h[6])" "$model")

$py - "$vocab" <<'PY'
import struct, sys
n = int(sys.argv[1])
p = [{0: b"<unk> ", 1: b"\n<s>\n", 2: b"\n</s>\n"}.get(i, b"%d " % i) for i in range(n)]
with open("ids.bin", "wb") as f:
    f.write(struct.pack("i", max(map(len, p))))
    for i, s in enumerate(p):
        f.write(struct.pack("fi", 0.0 if i < 3 else -float(i), len(s)) + s)
PY
if [ -n "$tok" ]; then cp "$tok" tok.bin; else cp ids.bin tok.bin; fi

# 1. token data: sampled ids, read back through the placeholder's pieces
$py - "$run" "$model" "$seq" <<'PY'
import subprocess, sys, numpy as np
run, model, seq = sys.argv[1], sys.argv[2], int(sys.argv[3])
special = {"<unk>": 0, "<s>": 1, "</s>": 2}
full = []
for seed in range(1, 400):
    txt = subprocess.run([run, model, "-z", "ids.bin", "-t", "1.0", "-p", "0.9", "-s", str(seed), "-n", str(seq)],
                         capture_output=True, text=True).stdout
    ids = [1] + [special[t] if t in special else int(t) for t in txt.split()]
    if len(ids) == seq + 1:
        full.append(ids)
n = len(full) * 9 // 10
np.array(sum(full[:n], []), dtype=np.uint16).tofile("train.bin")
np.array(sum(full[n:], []), dtype=np.uint16).tofile("val.bin")
print("data: %d whole-window stories, %d for validation" % (len(full), len(full) - n))
PY

# 2. eval_only at the header's sizes, against PyTorch
common=(--set init="\"$model\"" --set tokenizer='"tok.bin"' --set data='"train.bin"' --set val_data='"val.bin"')
ref=$($py - "$root/ckpt/testdata/llama2" "$model" <<'PY'
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1]); import gen
_, cfg, w, _ = gen.read(sys.argv[2])
val, S = np.fromfile("val.bin", dtype=np.uint16).astype(np.int64), cfg["max_seq_len"]
tot, n = 0.0, len(val) // (S + 1)
for j in range(n):
    win = val[j * (S + 1):(j + 1) * (S + 1)].tolist()
    tot += float(torch.nn.functional.cross_entropy(gen.forward(cfg, w, win[:-1], torch.float64), torch.tensor(win[1:]), reduction="sum"))
print("%.6f" % (tot / (n * S)))
PY
)
for numerics in fp16 fp32; do
  flag=(); [ $numerics = fp32 ] && flag=(--fp32)
  got=$(./anestar run "${flag[@]}" "$root/scripts/train_lm.star" "${common[@]}" --set eval_only=True --set ckpt='"ck.safetensors"' |
    sed -n 's/^step 0 val_loss \([0-9.]*\).*/\1/p')
  echo "eval_only, $numerics: val_loss $got; PyTorch float64 $ref; relative difference $($py -c "print('%.1e' % abs($got / $ref - 1))")"
done

# 3. fine-tune, export, greedy from both
./anestar run "$root/scripts/train_lm.star" "${common[@]}" --set steps=10 --set eval_every=0 --set ckpt='"ft.safetensors"' \
  --set best='""' --set metrics='"ft.jsonl"' --set export='"ft.bin"' | grep -E "^step 10 val_loss|^exported"
"$run" ft.bin -z tok.bin -t 0 -n 100 2>/dev/null > runc.txt
./anestar run "$root/scripts/sample.star" --set model='"ft.bin"' --set tokenizer='"tok.bin"' --set steps=100 --set temperature=0 > ours.txt
if cmp -s runc.txt ours.txt; then
  echo "greedy, 100 tokens from the export: run.c and sample.star wrote the same $(wc -c < ours.txt) bytes"
else
  echo "greedy: run.c and sample.star differ ($w/runc.txt, $w/ours.txt)"; exit 1
fi
echo "work files: $w"
