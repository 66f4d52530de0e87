"""The GIL held across a blocking CUDA call on real work (issue 32): a
queue of bf16 matmuls that keeps the GPU busy for about SECONDS, then
cuCtxSynchronize through ctypes.PyDLL, which keeps the GIL; three Python
threads wait in take_gil meanwhile."""
import ctypes, sys, threading, time
import torch
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 30
N = 32768  # ~0.1 s a matmul on an H100: the launch queue (about 1 000 deep) holds minutes
a = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
b = torch.randn(N, N, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.time()
for _ in range(3):
    c = a @ b
torch.cuda.synchronize()
per = (time.time() - t0) / 3
def heartbeat():
    while True:
        time.sleep(0.01)
for i in range(3):
    threading.Thread(target=heartbeat, daemon=True).start()
for _ in range(int(secs / per)):
    c = a @ b
cuda = ctypes.PyDLL("libcuda.so.1")
def synchronize():
    return cuda.cuCtxSynchronize()
print("sync:", synchronize(), flush=True)
