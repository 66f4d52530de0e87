#!/bin/sh
# A JVM's deadlocks named by the Java threads, not by the JVM's own
# (issue 32): HotSpot's compiler, GC, VM and service threads wait in
# os::PlatformMonitor::wait and PosixSemaphore::wait at rest, and they
# decided the words ("11 of 22 threads in os::PlatformMonitor::wait").
#  - ReentrantAbba abba (tests/real/serving): two threads each hold one
#    ReentrantLock and park for the other's: hang-blocked, naming
#    lock-a-then-b and lock-b-then-a, parked, and none of the JVM's own.
#  - ReentrantAbba mixed: a monitor and a ReentrantLock: both named, one
#    parked and one entering the monitor.
#  - A program whose only thread sleeps (Thread.sleep, nothing written):
#    idle -- the JVM's own threads with no timeout are no locks of the
#    program's (they made it hang-blocked).
# SKIP without java and javac (default-jdk-headless).
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_jq
command -v java > /dev/null 2>&1 && command -v javac > /dev/null 2>&1 ||
	skip "no java/javac (apt-get install default-jdk-headless)"
GP_TIMEOUT=40; export GP_TIMEOUT
cp "$top_srcdir/tests/real/serving/ReentrantAbba.java" "$TMP/" || framework_failure "no ReentrantAbba.java"
cat > "$TMP/Napper.java" <<'JAVA'
public class Napper {
    public static void main(String[] args) throws Exception {
        java.nio.file.Files.writeString(java.nio.file.Path.of(args[0]), "ready\n");
        for (;;)
            Thread.sleep(200);
    }
}
JAVA
javac -d "$TMP/classes" "$TMP/ReentrantAbba.java" "$TMP/Napper.java" 2> "$TMP/javac.err" ||
	framework_failure "javac: $(cat "$TMP/javac.err")"

OWN='CompilerThre|VM Thread|GC Thread|Signal Dispatch|Common-Cleaner|Finalizer|Reference Handl|VM Periodic|Service Thread|Notification Th|PlatformMonitor'

# trace_java NAME CLASS ARGS...: start it, wait for its ready file, trace it 8 s.
trace_java() {
	name=$1; shift
	java -cp "$TMP/classes" "$@" "$TMP/$name.ready" > "$TMP/$name.out" 2>&1 &
	jp=$!; bg_track $jp
	wait_until 60 test -s "$TMP/$name.ready" || fail "$name: the JVM did not get ready"
	gp trace -q --seconds 8 --hang-after 3 -o "$TMP/$name.jsonl" "$jp" > /dev/null 2>&1
	kill -9 "$jp" 2> /dev/null
	jq -r 'select(.type == "verdict") | "\(.class)|\(.summary)"' "$TMP/$name.jsonl" > "$TMP/$name.v"
	say "$name: $(cat "$TMP/$name.v")"
}
class_of() { cut -d'|' -f1 "$TMP/$1.v"; }
words() { cut -d'|' -f2- "$TMP/$1.v" | grep -Eq -- "$2"; }
no_own() { ! cut -d'|' -f2- "$TMP/$1.v" | grep -Eq -- "$OWN"; }

trace_java abba ReentrantAbba abba
ok "abba: hang-blocked" test "$(class_of abba)" = hang-blocked
ok "abba: both threads named, parked" words abba 'lock-a-then-b \([0-9]+\), lock-b-then-a \([0-9]+\) parked in Unsafe_Park'
ok "abba: nothing left to wake them" words abba 'no thread is left to wake them'
ok "abba: none of the JVM's own threads named" no_own abba

trace_java mixed ReentrantAbba mixed
ok "mixed: hang-blocked" test "$(class_of mixed)" = hang-blocked
ok "mixed: monitor-then-lk parked" words mixed 'monitor-then-lk \([0-9]+\) parked'
ok "mixed: lock-then-monit entering the monitor" words mixed 'lock-then-monit \([0-9]+\) blocked entering a monitor'
ok "mixed: none of the JVM's own threads named" no_own mixed

trace_java napper Napper
ok "napper: idle" test "$(class_of napper)" = idle
ok "napper: in Thread.sleep" words napper 'in Thread.sleep'
ok "napper: none of the JVM's own threads named" no_own napper
pass
