#!/usr/bin/env python3
"""A process whose mappings keep changing while one thread spins.

Truth: one thread busy in user space the whole time (the spinner); the main
thread maps and unmaps NFILES files and dlopens/dlcloses NLIBS copies of a
shared library, then (with --linger S) sits in select() for S seconds.
Issue 11's crash: trace's kept libdwfl session freed the wrong pointer when
a reported module left the process.

usage: maps-churn.py DIR [NFILES [NLIBS [LINGER_S]]]
"""
import ctypes, _ctypes, mmap, os, select, shutil, sys, threading, time

d = sys.argv[1]
nfiles = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
nlibs = int(sys.argv[3]) if len(sys.argv) > 3 else 100
linger = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
stop = False

def spin():
    x = 0
    while not stop:
        x += 1

# The spinner holds the GIL; at the default 5 ms switch interval every
# blocking call of the main thread waits for it, and the churn took 21 s
# alone, over 40 s traced on a loaded machine.  0.2 ms keeps the spinner
# hot and the churn short.
sys.setswitchinterval(0.0002)
t = threading.Thread(target=spin, name="spinner", daemon=True)
t.start()
os.makedirs(d, exist_ok=True)
# A library to copy: the interpreter's own libz/libm copies are shared objects
# that load without side effects.
src = None
for cand in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
             "/lib/aarch64-linux-gnu/libz.so.1", "/usr/lib64/libz.so.1"):
    if os.path.exists(cand):
        src = cand
        break
# Keep a window of live mappings and libraries, so that every sampler tick
# sees some appear and others go: a module reported at one refresh and gone
# at the next is what crashed trace.
maps, libs = [], []
nlib = 0
for i in range(nfiles):
    p = os.path.join(d, "f%04d" % i)
    with open(p, "wb") as f:
        f.write(b"\x7fELF" + b"x" * 65532)
    with open(p, "rb") as f:
        m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        _ = m[0] + m[65535]
    maps.append((m, p))
    if len(maps) > 40:
        om, op = maps.pop(0)
        om.close()
        os.unlink(op)
    if src and i % (nfiles // nlibs or 1) == 0 and i // (nfiles // nlibs or 1) < nlibs:
        # A fresh name each time: copying over a library still loaded
        # rewrites its mapped pages in place (the process then crashes on
        # its own, SIGSEGV at exit, with or without gpuprobe).
        lp = os.path.join(d, "lib%03d.so" % nlib)
        nlib += 1
        shutil.copy(src, lp)
        libs.append((ctypes.CDLL(lp), lp))
        if len(libs) > 4:
            h, olp = libs.pop(0)
            _ctypes.dlclose(h._handle)
            os.unlink(olp)
    time.sleep(0.003)
for m, p in maps:
    m.close()
    os.unlink(p)
for h, lp in libs:
    _ctypes.dlclose(h._handle)
    os.unlink(lp)
print("churn done", flush=True)
if linger > 0:
    select.select([], [], [], linger)
stop = True
