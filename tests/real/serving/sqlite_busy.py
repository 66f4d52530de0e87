#!/usr/bin/env python3
"""SQLite waiting for a write lock another process holds (issue 32, row 7).

  sqlite_busy.py holder DB READYFILE   "sqlite-holder": BEGIN IMMEDIATE and an
                                       INSERT (SQLite's RESERVED lock: a POSIX
                                       fcntl lock on the database file, listed in
                                       /proc/locks), writes READYFILE, then sleeps
                                       for ever inside the transaction.
  sqlite_busy.py waiter DB             "sqlite-waiter": an INSERT with a busy
                                       timeout of an hour: SQLite's busy handler
                                       sleeps (1, 2, 5 ... 100 ms) and tries the
                                       non-blocking lock (F_SETLK) again, for ever.
  sqlite_busy.py tree DB               both: the holder a child of the waiter.

Truth (the waiter): hang-blocked, the holder named: /proc/locks lists the
holder's lock on the file the waiter retries ("lock held by pid N"); the
waiter is retrying a refused non-blocking lock, not at rest.
"""
import ctypes, os, sqlite3, sys, time

libc = ctypes.CDLL(None)
def name(s): libc.prctl(15, s.encode()[:15], 0, 0, 0)      # PR_SET_NAME
def die_with_parent(): libc.prctl(1, 9, 0, 0, 0)            # PR_SET_PDEATHSIG, SIGKILL

def holder(db, ready):
    name("sqlite-holder")
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, v TEXT)")
    c.execute("BEGIN IMMEDIATE")
    c.execute("INSERT INTO jobs (v) VALUES ('held')")
    with open(ready + ".tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(ready + ".tmp", ready)
    while True:
        time.sleep(3600)

def waiter(db):
    name("sqlite-waiter")
    c = sqlite3.connect(db, timeout=3600, isolation_level=None)
    c.execute("INSERT INTO jobs (v) VALUES ('waiting')")

role, db = sys.argv[1], sys.argv[2]
if role == "holder":
    holder(db, sys.argv[3])
elif role == "waiter":
    waiter(db)
else:
    ready = db + ".ready"
    if os.fork() == 0:
        die_with_parent()
        holder(db, ready)
    while not os.path.exists(ready):
        time.sleep(0.05)
    waiter(db)
