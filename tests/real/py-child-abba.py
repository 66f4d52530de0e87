"""A multiprocessing parent whose worker deadlocks (issue 28: watch of
the parent said idle for 45 s): the parent starts one worker with
os.fork and waits for it in waitpid; the worker's two threads take two
locks in opposite order.  Each blocking line carries a '# LINE:name'
tag the test looks its number up by.  The worker prints its pid and
'deadlocked' once both threads hold their first lock.  With an argument
GATE, the parent forks only once the file GATE exists (the test starts
watch first)."""
import os
import sys
import threading
import time


def worker():
    a = threading.Lock()
    b = threading.Lock()
    both = threading.Barrier(3)

    def a_then_b():
        with a:
            both.wait()
            b.acquire()  # LINE:a_then_b

    def b_then_a():
        with b:
            both.wait()
            a.acquire()  # LINE:b_then_a

    ts = [threading.Thread(target=f, name=f.__name__) for f in (a_then_b, b_then_a)]
    for t in ts:
        t.start()
    both.wait()
    print("worker", os.getpid(), "deadlocked", flush=True)
    for t in ts:
        t.join()


if len(sys.argv) > 1:
    while not os.path.exists(sys.argv[1]):
        time.sleep(0.05)
pid = os.fork()
if pid == 0:
    worker()
    os._exit(0)
print("parent", os.getpid(), "waits for", pid, flush=True)
os.waitpid(pid, 0)  # LINE:parent_wait
sys.exit(0)
