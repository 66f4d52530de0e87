#!/bin/sh
# A JVM's traces, recorded (issue 32): tests/real/serving's ReentrantAbba
# (abba, cycle3, mixed) and ThreadedServer (at rest; its batcher dead)
# under HotSpot 17, traced by gpuprobe (`trace --seconds 8 --hang-after
# 3`), each line kept but the vm block and the frames' addresses.  The
# verdict, judged again from them: the class, the Java threads named, and
# none of the JVM's own threads (compiler, GC, VM, service threads,
# Finalizer, Cleaner), which were what the words named ("11 of 22 threads
# in os::PlatformMonitor::wait(long)").
# Regenerate: REAL_KEEP=DIR with tests/real/run.sh (serving-cases.tsv),
# then on each kept file, and zstd -19:
#   jq -c 'select(.type != "verdict") | if .type == "sample" then del(.vm)
#     elif .type == "stacks" then (.threads |= map((.frames |= map(if .jit
#     then {"jit": .jit, "pc": .pc} else {"symbol": .symbol, "soname":
#     .soname, "module": .module} end)) | del(.regs_from))) | del(.modules,
#     .cost) else . end' 
. "${0%/*}/lib.sh"
FX=$top_srcdir/tests/fixtures/traces/jvm
OWN='CompilerThre|VM Thread|GC Thread|Signal Dispatch|Common-Cleaner|Finalizer|Reference Handl|VM Periodic|Service Thread|Notification Th|PlatformMonitor'

# fixture | class | summary must contain (grep -E) | must not (grep -E)
judge_recorded "$FX" "$OWN" <<'TABLE'
abba|hang-blocked|lock-a-then-b \([0-9]+\), lock-b-then-a \([0-9]+\) parked in Unsafe_Park.*the JVM's own 18 threads|threads in futex
cycle3|hang-blocked|no thread is left to wake them.*cycle-1 \([0-9]+\), cycle-2 \([0-9]+\), cycle-3 \([0-9]+\) parked|threads in futex
mixed|hang-blocked|monitor-then-lk \([0-9]+\) parked.*lock-then-monit \([0-9]+\) blocked entering a monitor \(ObjectMonitor::enter|on a condition with a timeout
rest|idle|batcher \([0-9]+\) parked.*the main thread joins thread|no thread is left|deadlock
batcher-died|hang-blocked|thread [0-9]+ \(batcher\) of pid [0-9]+ ended.*[0-9]+ Java threads wait from user code with no timeout: handler-|no thread is left
TABLE
exit $failed
