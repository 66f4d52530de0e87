#!/bin/sh
# bundle and a JVM's own thread dump (issue 32).  By default gpuprobe never
# changes what it probes: a bundle of ReentrantAbba abba leaves no attach
# file nor listener socket in the JVM (/tmp/.java_pidPID), and its MANIFEST
# says how to ask.  With --jvm-threaddump, jvm-threads.txt holds HotSpot's
# own dump (threaddump -l through the attach protocol, as jstack -l) with
# its "Found one Java-level deadlock" report naming both threads and their
# ReentrantLocks, the MANIFEST says that this starts the JVM's attach
# listener, and the JVM printed nothing of its own (SIGQUIT with the
# attach file starts the listener instead of a dump on its stdout).
# SKIP without java and javac.
: "${E2E_TIMEOUT:=120}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
command -v java > /dev/null 2>&1 && command -v javac > /dev/null 2>&1 ||
	skip "no java/javac (apt-get install default-jdk-headless)"
GP_TIMEOUT=60; export GP_TIMEOUT
javac -d "$TMP/classes" "$top_srcdir/tests/real/serving/ReentrantAbba.java" 2> "$TMP/javac.err" ||
	framework_failure "javac: $(cat "$TMP/javac.err")"
mkdir -p "$TMP/cwd"
(cd "$TMP/cwd" && exec java -cp "$TMP/classes" ReentrantAbba abba "$TMP/ready") > "$TMP/java.out" 2>&1 &
JP=$!; bg_track $JP
wait_until 60 test -s "$TMP/ready" || fail "the JVM did not get ready"
sock=/proc/$JP/root/tmp/.java_pid$JP
[ -e "$sock" ] && skip "pid $JP's attach listener already runs"

gp bundle -q --seconds 2 --hang-after 1 -o "$TMP/b0.tar.gz" "$JP" > /dev/null || fail "bundle exited $?"
mkdir -p "$TMP/x0" && tar -xzf "$TMP/b0.tar.gz" -C "$TMP/x0" || fail "b0 does not unpack"
ok "default: no attach listener socket made" test ! -e "$sock"
ok "default: no attach file left" sh -c "! ls -a '$TMP/cwd' /tmp | grep -q '^\.attach_pid$JP\$'"
ok "default: no jvm-threads.txt" sh -c "! ls $TMP/x0/*/jvm-threads.txt 2>/dev/null | grep -q ."
ok "default: the MANIFEST says how to ask" grep -q 'jvm-threads.txt.*not asked.*--jvm-threaddump asks' "$TMP"/x0/*/MANIFEST

gp bundle -q --seconds 2 --hang-after 1 --jvm-threaddump -o "$TMP/b1.tar.gz" "$JP" > /dev/null ||
	fail "bundle --jvm-threaddump exited $?"
mkdir -p "$TMP/x1" && tar -xzf "$TMP/b1.tar.gz" -C "$TMP/x1" || fail "b1 does not unpack"
J=$(ls "$TMP"/x1/*/jvm-threads.txt)
ok "jvm-threads.txt: the listener answered 0" sh -c "sed -n 4p '$J' | grep -qx 0"
ok "jvm-threads.txt: HotSpot's deadlock report" grep -q '^Found one Java-level deadlock' "$J"
ok "jvm-threads.txt: both threads, each held by the other" sh -c \
	"grep -A1 '^\"lock-a-then-b\":' '$J' | grep -q 'ReentrantLock' &&
	 grep -q 'which is held by \"lock-b-then-a\"' '$J' && grep -q 'which is held by \"lock-a-then-b\"' '$J'"
ok "jvm-threads.txt says the listener was started" grep -q 'asked it to start its attach listener' "$J"
ok "MANIFEST: this starts the JVM's attach listener" grep -q "jvm-threads.txt *ok .*STARTS THE JVM'S ATTACH LISTENER" "$TMP"/x1/*/MANIFEST
ok "no attach file left" sh -c "! ls -a '$TMP/cwd' /tmp | grep -q '^\.attach_pid$JP\$'"
ok "the JVM printed no dump of its own" sh -c "! grep -q 'Full thread dump' '$TMP/java.out'"
ok "the JVM still runs" alive "$JP"
# A JVM killed leaves its listener's socket behind: ours, removed.
kill -9 "$JP"
wait "$JP" 2> /dev/null
rm -f "/tmp/.java_pid$JP"
pass
