"""The GIL held across a blocking call (issue 32: a recurring PyTorch hang,
a CUDA sync called with the GIL held).

  gil-held.py keep|release WAKE_FILE

The main thread starts three workers that each wait in a loop of short
sleeps (every wake-up needs the GIL), then calls read() on a pipe:
  keep     through ctypes.PyDLL, which keeps the GIL across the call (a C
           extension that forgets Py_BEGIN_ALLOW_THREADS), so the workers
           wait in take_gil behind it;
  release  through ctypes.CDLL, which releases it (the workers go on).
If WAKE_FILE appears, a thread that is not Python's (a pthread started
from C would do; here, a forked child) writes the pipe and the main thread
returns: both then exit 0.
"""
import ctypes, os, sys, threading, time

how, wake = sys.argv[1], sys.argv[2]
r, w = os.pipe()
if os.fork() == 0:
    # the waker: a child, so that no Python thread of the traced
    # process has to run to end the read
    os.close(r)
    while not os.path.exists(wake):
        time.sleep(0.1)
    os.write(w, b"x")
    os._exit(0)
os.close(w)


def worker():
    while True:
        time.sleep(0.01)


for i in range(3):
    threading.Thread(target=worker, name="worker-%d" % i, daemon=True).start()
time.sleep(0.3)
lib = (ctypes.PyDLL if how == "keep" else ctypes.CDLL)("libc.so.6")
buf = ctypes.create_string_buffer(8)


def load_weights():
    return lib.read(r, buf, 8)


load_weights()
os.wait()
