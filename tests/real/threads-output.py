#!/usr/bin/env python3
"""Several threads, each computing a little and writing its results.

Truth: progress.  Four worker threads hash a block and append 64 KiB to a
file of their own ten times a second (about 2.5 MiB/s of write() in all,
the process's own io); the main thread waits in join().
usage: threads-output.py DIR [SECONDS]
"""
import hashlib, os, sys, threading, time

d = sys.argv[1]
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 1000.0
os.makedirs(d, exist_ok=True)
end = time.monotonic() + secs

def work(i):
    block = os.urandom(65536)
    with open(os.path.join(d, "out%d" % i), "wb", buffering=0) as f:
        while time.monotonic() < end:
            block = hashlib.sha256(block).digest() * 2048
            f.write(block)
            time.sleep(0.1)

ts = [threading.Thread(target=work, args=(i,), name="worker%d" % i) for i in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
