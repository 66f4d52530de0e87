"""Turn 3's CUDA IPC shape (issue 29): process A spins on the GPU for a
flag that process B -- which holds the flag through CUDA IPC, a context
and no GPU work -- never sets; B sleeps.  A's host thread waits in
cupy's synchronize, B's in load_weights() (time.sleep).
Usage: python3 ipc_flag.py   (A; it starts B with multiprocessing spawn)
"""
import multiprocessing as mp
import time


def load_weights():
    time.sleep(3600)  # at: B sleeps


def b_main(handle, q):
    import cupy
    ptr = cupy.cuda.runtime.ipcOpenMemHandle(handle)
    q.put("opened")
    load_weights()  # never writes 1 at ptr
    cupy.cuda.runtime.ipcCloseMemHandle(ptr)


SPIN = r'''
extern "C" __global__ void wait_flag(volatile int *flag) {
    while (flag[0] == 0) { }
}
'''


def main():
    import cupy
    flag = cupy.zeros(1, dtype=cupy.int32)
    handle = cupy.cuda.runtime.ipcGetMemHandle(flag.data.ptr)
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    b = ctx.Process(target=b_main, args=(handle, q), name="b")
    b.start()
    print("B:", q.get(), flush=True)
    k = cupy.RawKernel(SPIN, "wait_flag")
    k((1,), (1,), (flag,))
    print("A: spinning", flush=True)
    cupy.cuda.Device().synchronize()  # at: A waits
    b.join()


if __name__ == "__main__":
    main()
