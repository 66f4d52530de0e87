"""Issue 18's reproducer with the real call: a Python thread that spins
50 ms, then pins SIZE GiB of anonymous memory with cudaHostRegister
(~0.4 s in the kernel for 8 GiB on the H200) and unregisters it, in a
loop for SECONDS; then prints "pin_loop: done N calls" and exits 7.

    python3 pin_loop.py [SECONDS [SIZE_GIB]]
"""
import sys
import threading
import time

import torch

secs = float(sys.argv[1]) if len(sys.argv) > 1 else 20
gib = int(sys.argv[2]) if len(sys.argv) > 2 else 8
buf = torch.empty(gib << 30, dtype=torch.uint8)
buf.fill_(1)  # fault it in now: the loop measures the pin, not first touch
rt = torch.cuda.cudart()
torch.cuda.init()
print(f"ready {gib} GiB", flush=True)
calls = 0
worst = 0.0


def loop():
    global calls, worst
    end = time.monotonic() + secs
    while time.monotonic() < end:
        s = time.monotonic() + 0.05
        while time.monotonic() < s:
            pass
        t0 = time.monotonic()
        err = rt.cudaHostRegister(buf.data_ptr(), buf.numel(), 0)
        dt = time.monotonic() - t0
        worst = max(worst, dt)
        if int(err) != 0:
            print("cudaHostRegister failed:", err, flush=True)
            sys.exit(2)
        rt.cudaHostUnregister(buf.data_ptr())
        calls += 1


th = threading.Thread(target=loop, name="pinner")
th.start()
th.join()
print(f"pin_loop: done {calls} calls, longest register {worst:.2f} s", flush=True)
sys.exit(7)
