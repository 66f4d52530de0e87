#!/usr/bin/env python3
"""Issue 19's table, each row a GPU workload with the host waiting in the
driver's sync (the truth beside each):

  spin1     one thread polling a flag nobody sets      -> hang-gpu-spin
  spin32    32 CTAs polling (a collective's shape)     -> hang-gpu-spin
  spinall   every SM polling (a livelock)              -> hang-gpu-spin
  fma       32 CTAs, an FMA loop                       -> progress / waiting-gpu
  chase     32 warps chasing pointers in 1 GiB         -> progress / waiting-gpu
  gemv      decode-like GEMV in a loop (torch)         -> progress
  gemm      GEMM 8192^3 fp16 in a loop (torch)         -> progress
  train     a bf16 matmul training loop, no output     -> progress
  idlewait  a stream waits for a value nobody writes; the host blocks in
            the driver's sync, the GPU has no kernel      -> hang-blocked
  xid       a store to an illegal address: the kernel log gets an Xid
            (NVRM Xid 31, with the pid), the process a CUDA error
usage: gpu_shapes.py SHAPE SECONDS    (prints "ready", then runs SECONDS;
the spins never end by themselves: the caller kills the process)"""
import sys
import time

shape, secs = sys.argv[1], float(sys.argv[2])

SPIN = r'''
extern "C" __global__ void spin(volatile int *flag) {
    while (*flag == 0) { }
}'''
FMA = r'''
extern "C" __global__ void fmaloop(float *out, long long iters) {
    float a = threadIdx.x, b = 1.0001f, c = 0.5f;
    for (long long i = 0; i < iters; i++) { a = a * b + c; c = c * b + a; }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a + c;
}'''
CHASE = r'''
extern "C" __global__ void chase(const long long *next, long long *out, long long steps) {
    long long p = (blockIdx.x * blockDim.x + threadIdx.x) * 4099;
    for (long long i = 0; i < steps; i++) p = next[p];
    out[blockIdx.x * blockDim.x + threadIdx.x] = p;
}'''


def cupy_kernel(src, name):
    import cupy as cp
    return cp, cp.RawKernel(src, name)


def main():
    end = time.monotonic() + secs
    if shape.startswith("spin"):
        cp, k = cupy_kernel(SPIN, "spin")
        flag = cp.zeros(1, dtype=cp.int32)
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        grid, block = {"spin1": (1, 1), "spin32": (32, 128), "spinall": (sms * 4, 256)}[shape]
        k((grid,), (block,), (flag,))
        print("ready", shape, "grid", grid, "block", block, "sms", sms, flush=True)
        cp.cuda.Device().synchronize()  # never returns
    elif shape in ("fma", "chase"):
        import cupy as cp
        print("ready", shape, flush=True)
        if shape == "fma":
            k = cp.RawKernel(FMA, "fmaloop")
            out = cp.zeros(32 * 128, dtype=cp.float32)
            while time.monotonic() < end:
                k((32,), (128,), (out, cp.int64(20_000_000)))
                cp.cuda.Device().synchronize()
        else:
            k = cp.RawKernel(CHASE, "chase")
            n = 1 << 27  # 1 GiB of int64
            nxt = cp.random.permutation(n).astype(cp.int64)
            out = cp.zeros(32 * 32, dtype=cp.int64)
            while time.monotonic() < end:
                k((32,), (32,), (nxt, out, cp.int64(2_000_000)))
                cp.cuda.Device().synchronize()
    elif shape in ("gemv", "gemm", "train"):
        import torch
        dev = "cuda"
        if shape == "gemm":
            a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
            b = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
            f = lambda: a @ b
        elif shape == "gemv":
            w = torch.randn(16384, 16384, device=dev, dtype=torch.float16)
            x = torch.randn(16384, 1, device=dev, dtype=torch.float16)
            f = lambda: w @ x
        else:
            model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.GELU(),
                                        torch.nn.Linear(4096, 4096)).to(dev, torch.bfloat16)
            opt = torch.optim.SGD(model.parameters(), lr=1e-4)
            x = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)

            def f():
                opt.zero_grad()
                model(x).float().pow(2).mean().backward()
                opt.step()
        print("ready", shape, flush=True)
        while time.monotonic() < end:
            for _ in range(20):
                f()
            torch.cuda.synchronize()
    elif shape == "idlewait":
        # The stream waits (in the GPU's front end, no kernel) for a
        # value nobody writes; the host blocks in the driver's sync: "a
        # completion that never came".
        import ctypes
        import cupy as cp
        cu = ctypes.CDLL("libcuda.so.1")
        flag = cp.zeros(1, dtype=cp.uint32)
        st = cp.cuda.Stream(non_blocking=True)
        fn = getattr(cu, "cuStreamWaitValue32_v2", None) or cu.cuStreamWaitValue32
        rc = fn(ctypes.c_void_p(st.ptr), ctypes.c_uint64(flag.data.ptr), ctypes.c_uint32(1),
                ctypes.c_uint(0))  # CU_STREAM_WAIT_VALUE_GEQ
        print("ready", shape, "cuStreamWaitValue32:", rc, flush=True)
        st.synchronize()  # never returns
    elif shape == "xid":
        import cupy as cp
        k = cp.RawKernel(r'''
extern "C" __global__ void bad(long long addr) { *(volatile int *)addr = 1; }''', "bad")
        print("ready", shape, flush=True)
        time.sleep(2)
        k((1,), (1,), (cp.int64(0x10),))
        try:
            cp.cuda.Device().synchronize()
        except Exception as e:  # cudaErrorIllegalAddress
            print("CUDA error:", e, flush=True)
        time.sleep(secs)
    else:
        sys.exit("unknown shape " + shape)
    print("done", shape, flush=True)


main()
