# A heartbeat: one line a second, asleep in between: progress (issue 20).
import sys, time
while True:
    sys.stdout.write("alive %d\n" % int(time.time()))
    sys.stdout.flush()
    time.sleep(1)
