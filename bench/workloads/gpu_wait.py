#!/usr/bin/env python3
"""Wait on one GPU kernel that runs SECONDS (the truth: waiting-gpu, the GPU
busy with this process's work; not a host hang).
usage: gpu_wait.py SECONDS spin|blocking"""
import sys, time
import cupy as cp
secs, mode = float(sys.argv[1]), sys.argv[2]
if mode == "blocking":
    cp.cuda.runtime.setDeviceFlags(4)   # cudaDeviceScheduleBlockingSync
else:
    cp.cuda.runtime.setDeviceFlags(1)   # cudaDeviceScheduleSpin
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
