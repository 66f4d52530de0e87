"""Four threads, each in a different Python function, for gpuprobe stacks.

wait_for_lock  blocks in Lock.acquire (a lock the main thread holds)
nap            blocks in time.sleep
compute        runs Python bytecode (a loop of arithmetic)
read_pipe      blocks in os.read on a pipe nobody writes
The main thread joins them.  Prints "ready" and the native TIDs once all
four are in place; every line that matters carries a '# LINE:name' tag
so tests find its number without hard-coding it.
"""
import os
import sys
import threading
import time

held = threading.Lock()
held.acquire()
rfd, wfd = os.pipe()
tids = {}
started = threading.Barrier(5)


def wait_for_lock():
    tids["wait_for_lock"] = threading.get_native_id()
    started.wait()
    held.acquire()  # LINE:wait_for_lock


def nap():
    tids["nap"] = threading.get_native_id()
    started.wait()
    while True:
        time.sleep(1000)  # LINE:nap


def spin(n):
    x = 0
    while True:
        x = (x * 31 + n) % 1000003  # LINE:spin


def compute():
    tids["compute"] = threading.get_native_id()
    started.wait()
    spin(7)  # LINE:compute


def read_pipe():
    tids["read_pipe"] = threading.get_native_id()
    started.wait()
    os.read(rfd, 1)  # LINE:read_pipe


threads = [threading.Thread(target=f, name=f.__name__, daemon=True)
           for f in (wait_for_lock, nap, compute, read_pipe)]
for t in threads:
    t.start()
started.wait()
time.sleep(0.2)
print("ready", "pid=%d" % os.getpid(), " ".join("%s=%d" % kv for kv in sorted(tids.items())), flush=True)
for t in threads:
    t.join()  # LINE:main
