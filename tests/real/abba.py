#!/usr/bin/env python3
"""An ABBA deadlock with two threading.Lock.

Truth: hang-blocked.  Thread "ab" takes lock A then B, thread "ba" takes B
then A; a barrier makes both hold their first lock before asking for the
second, so the deadlock is certain (not a race).  Both wait for ever in
PyThread_acquire_lock_timed (a futex); the main thread waits in join(),
itself a lock wait on the thread's state lock.  Nobody is runnable and
nothing outside the process can release either lock.
"""
import threading

a, b = threading.Lock(), threading.Lock()
both = threading.Barrier(2)

def take(first, second):
    with first:
        both.wait()
        with second:
            pass

t1 = threading.Thread(target=take, args=(a, b), name="ab")
t2 = threading.Thread(target=take, args=(b, a), name="ba")
t1.start(); t2.start()
t1.join(); t2.join()
