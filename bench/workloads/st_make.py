#!/usr/bin/env python3
"""Write safetensors files for the H200 load cases.
usage: st_make.py OUT.safetensors GIB [SHARDS]   (SHARDS files OUT-k.safetensors)"""
import sys, torch
from safetensors.torch import save_file
out, gib = sys.argv[1], float(sys.argv[2])
shards = int(sys.argv[3]) if len(sys.argv) > 3 else 1
per = 256 << 20                       # 256 MiB tensors, bf16
n = int(gib * (1 << 30) / per)
k = 0
for s in range(shards):
    d = {}
    for i in range(n // shards):
        d["layer%03d.weight" % k] = torch.full((per // 2,), float(k % 7), dtype=torch.bfloat16)
        k += 1
    name = out if shards == 1 else out.replace(".safetensors", "-%d.safetensors" % s)
    save_file(d, name)
    print(name, flush=True)
