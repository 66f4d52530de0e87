#!/usr/bin/env python3
"""Non-blocking lock polling, for tests/e2e/trace-lock-retry.sh.

  lock-poll.py hold FILE HOW      names itself lock-holder, takes the lock
                                  (HOW: fcntl or flock), prints "held",
                                  sleeps for ever
  lock-poll.py poll FILE HOW N    tries the lock without blocking every
                                  0.2 s, N times at most (SQLite's busy
                                  handler, in short); prints "tries T got G"
"""
import fcntl
import sys
import time


def lock(f, how):
    if how == "flock":
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)   # flock(2) LOCK_NB
    else:
        fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)   # fcntl(2) F_SETLK


def main():
    mode, path, how = sys.argv[1:4]
    f = open(path, "a+")
    if mode == "hold":
        with open("/proc/self/comm", "w") as c:   # named in the verdict
            c.write("lock-holder")
        lock(f, how)
        print("held", flush=True)
        while True:
            time.sleep(3600)
    tries = got = 0
    for _ in range(int(sys.argv[4])):
        tries += 1
        try:
            lock(f, how)
            got = 1
            break
        except OSError:
            time.sleep(0.2)
    print("tries %d got %d" % (tries, got), flush=True)


main()
