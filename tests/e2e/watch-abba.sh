#!/bin/sh
# gpuprobe watch --name python3 --hang-after 5, started before a Python
# ABBA deadlock (tests/real/py-abba.py): within --hang-after + 5 s of the
# deadlock it writes one bundle for that process and logs one line; the
# bundle's report says hang-blocked and names both acquire lines (File
# "py-abba.py", line N, in a_then_b / b_then_a).  A python3 that sleeps
# past --hang-after and exits normally leaves no bundle.
# Other python3 processes of the machine may be followed too (make check
# runs tests side by side): only bundles named with our pids count.
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_python
SCRIPT=$top_srcdir/tests/real/py-abba.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }
LA=$(line_of a_then_b); LB=$(line_of b_then_a)
B=$TMP/bundles

# --bundle-every 0: another test's python3 that hangs meanwhile must not
# hold ours back by the rate limit.
"$GPUPROBE" watch --name python3 --hang-after 5 --bundle-every 0 --bundle-dir "$B" \
	> "$TMP/log" 2> "$TMP/err" &
W=$!; bg_track $W
sleep 0.5
"$PY" -c 'import time; time.sleep(7)' &
SLEEPER=$!; bg_track $SLEEPER
"$PY" "$SCRIPT" > "$TMP/py.out" &
ABBA=$!; bg_track $ABBA
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
	sh -c "[ \$(grep -c 'pid $ABBA (python3): hang-blocked.*bundle ' '$TMP/log') = 1 ]"
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
