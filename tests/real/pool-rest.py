# A multiprocessing Pool at rest: four workers share one task queue; one
# holds the queue's read lock while it waits in read() on the queue's
# pipe for a task that never comes, the others wait for that lock; the
# main thread sleeps.  Idle (issue 20).  Writes "ready" to argv[1] once
# the pool has answered a first map.
import multiprocessing, sys, time
if __name__ == "__main__":
    with multiprocessing.Pool(4) as p:
        p.map(abs, range(8))
        with open(sys.argv[1], "w") as f:
            f.write("ready\n")
        time.sleep(3600)
