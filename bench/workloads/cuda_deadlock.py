#!/usr/bin/env python3
"""A real deadlock after CUDA init (the truth: hang-blocked; both threads in
a lock acquire, the GPU idle)."""
import threading, time, torch
x = torch.ones(1 << 20, device="cuda:0")
torch.cuda.synchronize()
a, b = threading.Lock(), threading.Lock()
def one():
    with a:
        time.sleep(0.5)
        with b: pass
def two():
    with b:
        time.sleep(0.5)
        with a: pass
t1 = threading.Thread(target=one, name="one"); t2 = threading.Thread(target=two, name="two")
t1.start(); t2.start(); t1.join(); t2.join()
