# A compute loop at 100 % CPU that logs one 20-byte line a second:
# progress, however small the output (issue 20).
import sys, time
n, last = 0, time.monotonic()
while True:
    n += 1
    if time.monotonic() - last >= 1:
        last = time.monotonic()
        sys.stdout.write("step %013d\n" % (n % 10**13))
        sys.stdout.flush()
