"""A torch process whose main thread waits on a long GPU kernel, and a
second Python thread that waits on the first (bench/h200-python.sh).
usage: py-gpu-wait.py [CYCLES]   Prints "ready pid=N"; runs until killed.
The synchronize and join lines are tagged."""
import os
import sys
import threading

import torch

cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000_000_000
torch.zeros(1, device="cuda:0")  # the context, before "ready"
done = threading.Event()


def wait_for_kernel():
    while True:
        torch.cuda._sleep(cycles)  # a kernel that spins CYCLES GPU clocks
        torch.cuda.synchronize()  # LINE:wait_for_kernel


def watcher():
    while not done.wait(0.5):  # LINE:watcher
        pass


threading.Thread(target=watcher, name="watcher", daemon=True).start()
print("ready pid=%d" % os.getpid(), flush=True)
wait_for_kernel()
