#!/usr/bin/env python3
"""GPU workloads with a known truth, for issue 13's acceptance on the H200.

    python3 gpu-wait.py MODE [SECONDS]

  kernel-spin      one GPU kernel of SECONDS (default 70), host waits in
                   cuCtxSynchronize with CU_CTX_SCHED_SPIN: one thread at
                   100 % CPU, GPU 100 %          -> truth: waiting-gpu
  kernel-blocking  the same with CU_CTX_SCHED_BLOCKING_SYNC: the host
                   thread sleeps, wchan futex_do_wait (measured on the
                   H200, 2026-12-03)             -> truth: waiting-gpu
  deadlock         CUDA initialised, then two threads take two locks in
                   opposite order: both block, GPU idle
                                                 -> truth: hang-blocked
  load             writes a SECONDS*256 MiB weights file (default 8 s ->
                   2 GiB) to $TMPDIR, drops nothing, then loads it to the
                   GPU in 64 MiB tensors with a matmul on each
                                                 -> truth: progress (GPU memory,
                                                    reads, utilisation)

Prints "ready PID" when the GPU context is up, and "phase NAME t" at each
change, on stdout (flushed), so a script can line the trace up.
The scheduling flag goes through the driver API before torch touches the
device: torch uses the primary context, whose flags
cuDevicePrimaryCtxSetFlags sets (CUDA driver API reference).
"""
import ctypes
import os
import sys
import tempfile
import threading
import time

CU_CTX_SCHED_SPIN = 0x1
CU_CTX_SCHED_BLOCKING_SYNC = 0x4


def say(*a):
    print(*a, flush=True)


def set_sched(flag):
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) != 0:
        sys.exit("cuInit failed")
    setf = getattr(cuda, "cuDevicePrimaryCtxSetFlags_v2", None) or cuda.cuDevicePrimaryCtxSetFlags
    rc = setf(0, flag)
    if rc != 0:
        sys.exit("cuDevicePrimaryCtxSetFlags: %d" % rc)


def cycles_per_second(torch):
    t = time.time()
    torch.cuda._sleep(200_000_000)
    torch.cuda.synchronize()
    return 200_000_000 / (time.time() - t)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "kernel-spin"
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else (8 if mode == "load" else 70)
    if mode == "kernel-spin":
        set_sched(CU_CTX_SCHED_SPIN)
    elif mode == "kernel-blocking":
        set_sched(CU_CTX_SCHED_BLOCKING_SYNC)
    import torch
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    say("ready", os.getpid())
    if mode.startswith("kernel"):
        rate = cycles_per_second(torch)
        time.sleep(2)
        say("phase kernel", time.time())
        torch.cuda._sleep(int(rate * secs))
        torch.cuda.synchronize()
        say("phase done", time.time())
        time.sleep(3)
    elif mode == "deadlock":
        a, b = threading.Lock(), threading.Lock()

        def one(x, y):
            with x:
                time.sleep(0.5)
                with y:
                    pass

        say("phase deadlock", time.time())
        t1 = threading.Thread(target=one, args=(a, b), name="worker-ab")
        t2 = threading.Thread(target=one, args=(b, a), name="worker-ba")
        t1.start()
        t2.start()
        t1.join()
    elif mode == "load":
        mib = int(secs * 256)
        path = os.path.join(tempfile.gettempdir(), "gpu-wait-weights.bin")
        if not os.path.exists(path) or os.path.getsize(path) != mib << 20:
            with open(path, "wb") as f:
                chunk = os.urandom(1 << 20)
                for _ in range(mib):
                    f.write(chunk)
        say("phase load", time.time())
        x = torch.randn(4096, 4096, device="cuda")
        held = []
        with open(path, "rb") as f:
            while True:
                buf = f.read(64 << 20)
                if not buf:
                    break
                t = torch.frombuffer(bytearray(buf), dtype=torch.float32).to("cuda")
                held.append(t)
                y = x @ x
        torch.cuda.synchronize()
        say("phase done", time.time(), "tensors", len(held))
        time.sleep(3)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
