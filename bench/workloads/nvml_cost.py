#!/usr/bin/env python3
"""What each NVML call gpuprobe makes costs, on this machine, with a GEMM
loop on GPU 0 (NVML calls take the driver's lock: a busy GPU is the case
that matters).  ctypes on libnvidia-ml.so.1, N calls each, wall time per
call.  usage: nvml_cost.py [N]"""
import ctypes as C
import subprocess
import sys
import time

n = int(sys.argv[1]) if len(sys.argv) > 1 else 50
load = subprocess.Popen([sys.executable, __file__.replace("nvml_cost.py", "gpu_shapes.py"), "gemm", "60"],
                        stdout=subprocess.PIPE, text=True)
load.stdout.readline()  # "ready"
time.sleep(2)
nv = C.CDLL("libnvidia-ml.so.1")
nv.nvmlInit_v2()
h = C.c_void_p()
nv.nvmlDeviceGetHandleByIndex_v2(0, C.byref(h))
u = C.c_uint()
buf = (C.c_ubyte * 65536)()
cnt = C.c_uint()
util = (C.c_uint * 2)()
sample = (C.c_ubyte * 32 * 256)()
s1, s2 = C.c_void_p(), C.c_void_p()
nv.nvmlGpmSampleAlloc(C.byref(s1))
nv.nvmlGpmSampleAlloc(C.byref(s2))
nv.nvmlGpmSampleGet(h, s1)
time.sleep(0.2)


class Metric(C.Structure):
    _fields_ = [("id", C.c_uint), ("ret", C.c_int), ("value", C.c_double), ("info", C.c_void_p * 3)]


class Get(C.Structure):
    _fields_ = [("version", C.c_uint), ("n", C.c_uint), ("s1", C.c_void_p), ("s2", C.c_void_p),
                ("m", Metric * 98)]


def gpm_metrics(k=8):
    """nvmlGpmMetricsGet of gpuprobe's first k metrics: whether its cost
    is the call's or each metric's (issue 19's 2 ms budget)."""
    g = Get()
    g.version, g.n, g.s1, g.s2 = 1, k, s1, s2
    for i, mid in enumerate((2, 3, 5, 13, 12, 11, 4, 10)[:k]):
        g.m[i].id = mid
    return nv.nvmlGpmMetricsGet(C.byref(g))


calls = {
    "nvmlDeviceGetPowerUsage": lambda: nv.nvmlDeviceGetPowerUsage(h, C.byref(u)),
    "nvmlDeviceGetUtilizationRates": lambda: nv.nvmlDeviceGetUtilizationRates(h, util),
    "nvmlDeviceGetClockInfo(SM)": lambda: nv.nvmlDeviceGetClockInfo(h, 1, C.byref(u)),
    "nvmlDeviceGetCurrentClocksEventReasons": lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h, C.byref(C.c_ulonglong())),
    "nvmlDeviceGetComputeRunningProcesses_v2": lambda: (cnt.__setattr__("value", 64), nv.nvmlDeviceGetComputeRunningProcesses_v2(h, C.byref(cnt), buf))[1],
    "nvmlDeviceGetGraphicsRunningProcesses_v2": lambda: (cnt.__setattr__("value", 64), nv.nvmlDeviceGetGraphicsRunningProcesses_v2(h, C.byref(cnt), buf))[1],
    "nvmlDeviceGetProcessUtilization": lambda: (cnt.__setattr__("value", 256), nv.nvmlDeviceGetProcessUtilization(h, sample, C.byref(cnt), C.c_ulonglong(int(time.time() * 1e6) - 1000000)))[1],
    "nvmlGpmSampleGet": lambda: nv.nvmlGpmSampleGet(h, s2),
    "nvmlGpmMetricsGet (8 metrics)": gpm_metrics,
    "nvmlGpmMetricsGet (1 metric)": lambda: gpm_metrics(1),
    "nvmlGpmMetricsGet (4 metrics)": lambda: gpm_metrics(4),
}
print(f"| call | ms per call (median of {n}) | max | rc |")
print("|---|---|---|---|")
for name, f in calls.items():
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        rc = f()
        ts.append((time.perf_counter() - t0) * 1000)
        if "Gpm" in name:
            time.sleep(0.1)
    ts.sort()
    print(f"| {name} | {ts[len(ts) // 2]:.3f} | {ts[-1]:.3f} | {rc} |", flush=True)
load.kill()
