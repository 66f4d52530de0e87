"""A torch process loading safetensors shards to the GPU, over and over
(bench/h200-python.sh).  usage: py-safetensors-load.py DIR [SHARDS] [MIB_PER_SHARD]
Writes the shards once, prints "ready pid=N", then loads every shard to
cuda:0 in a loop until killed; load_shard's load line is tagged."""
import os
import sys
import time

import torch
from safetensors.torch import load_file, save_file

d = sys.argv[1]
shards = int(sys.argv[2]) if len(sys.argv) > 2 else 4
mib = int(sys.argv[3]) if len(sys.argv) > 3 else 512
os.makedirs(d, exist_ok=True)
paths = []
for i in range(shards):
    p = os.path.join(d, "shard-%d.safetensors" % i)
    if not os.path.exists(p):
        n = mib * 1024 * 1024 // 4 // 8
        save_file({"w%d" % k: torch.rand(n) for k in range(8)}, p)
    paths.append(p)


def load_shard(path):
    t = load_file(path, device="cuda:0")  # LINE:load_shard
    torch.cuda.synchronize()
    return sum(v.numel() for v in t.values())


def load_model():
    total = 0
    for p in paths:
        total += load_shard(p)  # LINE:load_model
    return total


print("ready pid=%d" % os.getpid(), flush=True)
rounds = 0
t0 = time.time()
while True:
    load_model()
    rounds += 1
    if rounds % 10 == 0:
        print("rounds %d, %.1f s" % (rounds, time.time() - t0), flush=True)
