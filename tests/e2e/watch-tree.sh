#!/bin/sh
# watch PID follows the tree (issue 28: `watch PID` of a multiprocessing
# parent stayed idle for 45 s while the worker it waited for was
# deadlocked, where trace and bundle said hang-blocked).  A Python parent
# (tests/real/py-child-abba.py) forks a worker whose two threads take two
# locks in opposite order, and waits for it in waitpid.  `watch PARENT
# --hang-after 5 --bundle-dir DIR --metrics FILE`, started before the
# fork, must within --hang-after + 10 s of the deadlock:
#   - write one bundle, named for the parent, whose verdict (the verdict
#     line of its watch.jsonl, and report.md) is hang-blocked, naming the
#     worker's pid and both acquire lines;
#   - log one line for the parent's hang;
#   - name the worker in the metrics: its own wait signature line and
#     class (gpuprobe_process_wait_signature{pid="WORKER",...});
#   - follow the worker inside the parent's tree; leave both running,
#     not stopped.
: "${E2E_TIMEOUT:=60}"; export E2E_TIMEOUT
. "${0%/*}/lib.sh"
require_python
SCRIPT=$top_srcdir/tests/real/py-child-abba.py
line_of() { grep -n "# LINE:$1\$" "$SCRIPT" | cut -d: -f1; }
LA=$(line_of a_then_b); LB=$(line_of b_then_a)
B=$TMP/bundles
M=$TMP/metrics.prom
HANG=5

"$PY" "$SCRIPT" "$TMP/gate" > "$TMP/py.out" 2>&1 &
P=$!; bg_track $P
"$GPUPROBE" watch "$P" --interval 0.5 --hang-after $HANG --bundle-every 0 --bundle-dir "$B" \
	--metrics "$M" > "$TMP/log" 2> "$TMP/err" &
W=$!; bg_track $W
following() { grep -q "following pid $P " "$TMP/log"; }
wait_until 10 following || { cat "$TMP/log" "$TMP/err"; fail "watch did not follow pid $P"; }
touch "$TMP/gate"
deadlocked() { grep -q deadlocked "$TMP/py.out"; }
wait_until 10 deadlocked || { cat "$TMP/py.out"; fail "the worker did not deadlock"; }
T0=$(now)
C=$(sed -n 's/^worker \([0-9]*\) deadlocked$/\1/p' "$TMP/py.out")
bg_track $C
bundle() { ls "$B"/gpuprobe-bundle-$P-*.tar.gz > /dev/null 2>&1; }
wait_until $((HANG + 10)) bundle
took=$(elapsed "$T0")
cat "$TMP/log"
say "bundle of parent $P (worker $C deadlocked) after ${took} s"
ok "a bundle within --hang-after + 10 s of the deadlock (${took} s)" fcmp "$took" '<=' $((HANG + 10))
ok "exactly one bundle, the parent's" \
	sh -c "[ \$(ls '$B' | grep -c '^gpuprobe-bundle-.*\\.tar\\.gz\$') = 1 ] && ls '$B' | grep -q '^gpuprobe-bundle-$P-'"
ok "one log line: the parent hang-blocked, with its bundle" \
	sh -c "[ \$(grep -c 'pid $P (.*): hang-blocked.*bundle ' '$TMP/log') = 1 ]"
ok "the worker is not followed as a process of its own" sh -c "! grep -q 'following pid $C ' '$TMP/log'"

mkdir "$TMP/x" && tar -xzf "$B"/gpuprobe-bundle-$P-*.tar.gz -C "$TMP/x" || fail "tar cannot read the bundle"
D=$(echo "$TMP"/x/gpuprobe-bundle-$P-*)
cls=$(jq -r 'select(.type == "verdict") | .class' "$D/watch.jsonl" | tail -n 1)
ok "watch.jsonl's verdict is hang-blocked (got '$cls')" [ "$cls" = hang-blocked ]
summary=$(jq -r 'select(.type == "verdict") | .summary' "$D/watch.jsonl" | tail -n 1)
say "watch's verdict: $summary"
ok "the verdict names the worker (pid $C)" sh -c "printf '%s' \"\$1\" | grep -q '$C'" - "$summary"
ok "report says hang-blocked" grep -q 'hang-blocked' "$D/report.md"
ok "report: File \"$SCRIPT\", line $LA, in worker.<locals>.a_then_b" grep -qF "File \"$SCRIPT\", line $LA, in worker.<locals>.a_then_b" "$D/report.md"
ok "report: File \"$SCRIPT\", line $LB, in worker.<locals>.b_then_a" grep -qF "File \"$SCRIPT\", line $LB, in worker.<locals>.b_then_a" "$D/report.md"
ok "MANIFEST says why: hang-blocked" grep -q '^why: gpuprobe watch: hang-blocked' "$D/MANIFEST"

cp "$M" "$TMP/copy.prom"
grep "pid=\"$C\"" "$TMP/copy.prom"
ok "metrics: the worker's wait signature" grep -q "^gpuprobe_process_wait_signature{pid=\"$C\"" "$TMP/copy.prom"
ok "metrics: the worker's class hang-blocked" \
	grep -q "^gpuprobe_process_class{pid=\"$C\",.*class=\"hang-blocked\"} 1" "$TMP/copy.prom"
ok "metrics: the parent's class hang-blocked" \
	grep -q "^gpuprobe_process_class{pid=\"$P\",.*class=\"hang-blocked\"} 1" "$TMP/copy.prom"
ok "the parent was left running, not stopped" no_stopped "$P"
ok "the worker was left running, not stopped" no_stopped "$C"

kill -TERM $W
wait $W
rc=$?
ok "SIGTERM: watch exits 0 (got $rc)" [ $rc -eq 0 ]
kill -KILL $C $P 2> /dev/null
pass
