#!/usr/bin/env python3
"""Wait on one GPU kernel that runs SECONDS (the truth: waiting-gpu, the GPU
busy with this process's work; not a host hang).
usage: gpu_wait.py SECONDS spin|blocking"""
import sys, time
import cupy as cp
secs, mode = float(sys.argv[1]), sys.argv[2]
# The primary context's scheduling flags, set through the driver API before
# cupy creates the context (cupy's runtime module has no setDeviceFlags):
# CU_CTX_SCHED_SPIN = 1, CU_CTX_SCHED_BLOCKING_SYNC = 4.
import ctypes
cu = ctypes.CDLL("libcuda.so.1")
cu.cuInit(0)
dev = ctypes.c_int()
cu.cuDeviceGet(ctypes.byref(dev), 0)
rc = cu.cuDevicePrimaryCtxSetFlags(dev, 4 if mode == "blocking" else 1)
print("cuDevicePrimaryCtxSetFlags:", rc, flush=True)
k = cp.RawKernel(r'''
extern "C" __global__ void spin(long long ns) {
    long long start; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) { long long now; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
               if (now - start > ns) break; }
}''', "spin")
k((1,), (1,), (cp.int64(int(secs * 1e9)),))
t0 = time.time()
cp.cuda.Device().synchronize()
print("kernel done after %.1f s" % (time.time() - t0), flush=True)
