#!/usr/bin/env python3
"""Load safetensors files to the GPU, then sleep (the truth: progress while
loading, GPU memory rising; then idle: the main thread on a timer).
usage: st_load.py SLEEP_S FILE..."""
import sys, time, torch
from safetensors.torch import load_file
sleep_s = float(sys.argv[1])
torch.cuda.init()
t0 = time.time()
total = 0
keep = []
for f in sys.argv[2:]:
    d = load_file(f, device="cuda:0")
    total += sum(v.numel() * v.element_size() for v in d.values())
    keep.append(d)
torch.cuda.synchronize()
print("loaded %.1f GiB in %.1f s; sleeping %.0f s" % (total / 2**30, time.time() - t0, sleep_s),
      flush=True)
time.sleep(sleep_s)
