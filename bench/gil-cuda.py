"""The GIL held across a blocking CUDA call (issue 32: a recurring PyTorch
hang): a kernel that runs for SECONDS, then cuCtxSynchronize called
through ctypes.PyDLL, which keeps the GIL (a C extension that forgot
Py_BEGIN_ALLOW_THREADS); three Python threads that want to run wait in
take_gil meanwhile."""
import ctypes, sys, threading, time
import cupy
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 40
busy = cupy.RawKernel(r'''
extern "C" __global__ void busy(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}''', "busy")
def heartbeat(i):
    while True:
        time.sleep(0.01)
for i in range(3):
    threading.Thread(target=heartbeat, args=(i,), daemon=True).start()
time.sleep(0.3)
rate = cupy.cuda.runtime.deviceGetAttribute(cupy.cuda.runtime.cudaDevAttrClockRate, 0) * 1000
busy((1,), (1,), (cupy.int64(int(secs * rate)),))
cuda = ctypes.PyDLL("libcuda.so.1")
def synchronize():
    return cuda.cuCtxSynchronize()
print("sync:", synchronize(), flush=True)
