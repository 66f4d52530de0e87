#!/bin/sh
# gpuprobe demo traces each built-in workload for real and the verdict is
# right for each: a spinner, a deadlock, a restart loop in the kernel, a
# slow loader, a load that deadlocks (since_s near the switch), a bursty
# writer (progress), a command that exits 3 (exited, status recorded).
E2E_TIMEOUT=120
. "${0%/*}/lib.sh"
require_jq
GP_TIMEOUT=100 gp demo --format json --keep "$TMP/results" > "$TMP/demo.json" 2> "$TMP/err"
rc=$?
ok "gpuprobe demo exit code $rc is 0" test $rc -eq 0
jq -r '.workloads[] | "\(.workload) \(.expected) \(.verdict.class) \(.verdict.since_s)"' \
	"$TMP/demo.json" | sed "s/^/$ME:   /"
ok "7 workloads" test "$(jq '.workloads | length' "$TMP/demo.json")" -eq 7
for w in $(jq -r '.workloads[].workload' "$TMP/demo.json"); do
	got=$(jq -r --arg w "$w" '.workloads[] | select(.workload == $w) | .verdict.class' "$TMP/demo.json")
	want=$(jq -r --arg w "$w" '.workloads[] | select(.workload == $w) | .expected' "$TMP/demo.json")
	ok "$w: $got is $want" test "$got" = "$want"
done
since=$(jq -r '.workloads[] | select(.workload == "load-then-deadlock") | .verdict.since_s' "$TMP/demo.json")
# The workload pages 48 MiB in for 2 s after writing its scratch file.
ok "load-then-deadlock: since_s $since within 1.5-4 s" fcmp "$since" '>=' 1.5
ok "load-then-deadlock: since_s $since <= 4" fcmp "$since" '<=' 4
ok "exit3: status 3 in the summary" \
	jq -e '.workloads[] | select(.workload == "exit3") | .verdict.summary | test("exited with status 3")' "$TMP/demo.json"
ok "kernel-loop names a thread busy in the kernel" \
	jq -e '.workloads[] | select(.workload == "kernel-loop") | .verdict.summary | test("busy in the kernel")' "$TMP/demo.json"
ok "spin names both spinners" \
	jq -e '.workloads[] | select(.workload == "spin") | .verdict.summary | test("async-events-0.*async-events-1|async-events-1.*async-events-0")' "$TMP/demo.json"
# The kept results render again, with the same classes.
for f in "$TMP"/results/*.jsonl; do
	ok "$(basename "$f") reports" gp report --format json --hang-after 3 "$f" > /dev/null
done
pass
