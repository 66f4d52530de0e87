"""A Python ABBA deadlock, run inside a container by container-stacks.sh:
two threads take two locks in opposite order.  Each blocking acquire line
carries a '# LINE:name' tag the test looks its number up by."""
import threading

a = threading.Lock()
b = threading.Lock()
both = threading.Barrier(2)


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
print("deadlocked", flush=True)
for t in ts:
    t.join()
