#!/bin/sh
# gpuprobe watch --name NAME --hang-after 5, started before a Python
# ABBA deadlock (tests/real/py-abba.py): within --hang-after + 5 s of the
# deadlock it writes one bundle for that process and logs one line; the
# bundle's report says hang-blocked and names both acquire lines (File
# "py-abba.py", line N, in a_then_b / b_then_a).  A python3 that sleeps
# past --hang-after and exits normally leaves no bundle.
# NAME is this test's own (gpabbaPID): its two python3 run through a
# symlink of that name to the interpreter, so their comm and argv[0] are
# NAME (what --name matches, src/tracer/identity.c) while their exe and
# maps stay the interpreter's (its Python frames are read).  `watch --name
# python3` followed every other python3 of the machine too, one bundle at
# a time: five left by another test (tests/real/pool-rest.py's, issue 27)
# held ours back to 15 s, and the test failed.
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_python
SCRIPT=$top_srcdir/tests/real/py-abba.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }
LA=$(line_of a_then_b); LB=$(line_of b_then_a)
B=$TMP/bundles
NAME=$(printf 'gpabba%s' "$$" | cut -c 1-15)   # comm holds 15 characters
ln -s "$PY" "$TMP/$NAME" || framework_failure "cannot link $PY"

# A stranger: a python3 of the machine, hung (as pool-rest.py's were);
# watch must not follow it.
"$PY" -c 'import threading; l = threading.Lock(); l.acquire(); l.acquire()' &
STRANGER=$!; bg_track $STRANGER

# --bundle-every 0: no bundle of ours may wait behind another's.
"$GPUPROBE" watch --name "$NAME" --hang-after 5 --bundle-every 0 --bundle-dir "$B" \
	> "$TMP/log" 2> "$TMP/err" &
W=$!; bg_track $W
sleep 0.5
"$TMP/$NAME" -c 'import time; time.sleep(7)' &
SLEEPER=$!; bg_track $SLEEPER
"$TMP/$NAME" "$SCRIPT" > "$TMP/py.out" &
ABBA=$!; bg_track $ABBA
named() { [ "$(cat "/proc/$ABBA/comm" 2>/dev/null)" = "$NAME" ]; }
wait_until 5 named || framework_failure "pid $ABBA is not named $NAME"
deadlocked() { grep -q deadlocked "$TMP/py.out"; }
wait_until 10 deadlocked || fail "the ABBA script did not deadlock"
T0=$(now)
bundle() { ls "$B"/gpuprobe-bundle-$ABBA-*.tar.gz > /dev/null 2>&1; }
wait_until 15 bundle
took=$(elapsed "$T0")
cat "$TMP/log"
say "bundle of pid $ABBA after ${took} s"
ok "one bundle within --hang-after + 5 s of the deadlock (${took} s)" fcmp "$took" '<=' 10
ok "exactly one bundle for the deadlocked pid" \
	sh -c "[ \$(ls '$B' | grep -c '^gpuprobe-bundle-$ABBA-.*\\.tar\\.gz\$') = 1 ]"
ok "one log line names the hang and the bundle" \
	sh -c "[ \$(grep -c 'pid $ABBA ($NAME): hang-blocked.*bundle ' '$TMP/log') = 1 ]"
ok "watch followed no process but ours (pids $ABBA and $SLEEPER; not $STRANGER)" \
	sh -c "! grep 'following pid' '$TMP/log' | grep -v -e 'pid $ABBA ' -e 'pid $SLEEPER '"
wait $SLEEPER
ok "the sleeper exited 0" [ $? -eq 0 ]
sleep 1.5   # a tick after its exit: time for a wrong bundle to appear
ok "no bundle for the process that exited normally" \
	sh -c "! ls '$B' | grep -q '^gpuprobe-bundle-$SLEEPER-'"
ok "nothing half-written left in the bundle directory" sh -c "! ls '$B' | grep -q '\\.tmp\$'"

mkdir "$TMP/x" && tar -xzf "$B"/gpuprobe-bundle-$ABBA-*.tar.gz -C "$TMP/x" || fail "tar cannot read the bundle"
D=$(echo "$TMP"/x/gpuprobe-bundle-$ABBA-*)
for f in MANIFEST info.txt trace.jsonl stacks.txt watch.jsonl report.md; do
	ok "bundle holds $f" test -s "$D/$f"
done
ok "report says hang-blocked" grep -q 'hang-blocked' "$D/report.md"
ok "report: File \"$SCRIPT\", line $LA, in a_then_b" grep -qF "File \"$SCRIPT\", line $LA, in a_then_b" "$D/report.md"
ok "report: File \"$SCRIPT\", line $LB, in b_then_a" grep -qF "File \"$SCRIPT\", line $LB, in b_then_a" "$D/report.md"
ok "MANIFEST names the trace's command" grep -q "^trace.jsonl .*gpuprobe trace $ABBA " "$D/MANIFEST"
ok "MANIFEST says why the bundle was made" grep -q '^why: gpuprobe watch: hang-blocked' "$D/MANIFEST"
ok "the target was left running, not stopped" no_stopped "$ABBA"

kill -TERM $W
wait $W
rc=$?
ok "SIGTERM: watch exits 0 (got $rc)" [ $rc -eq 0 ]
pass
