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
# The kept results render again, with the same classes and since_s: one
# file per workload (demo.c: DIR/WORKLOAD.jsonl), judged by `report` from
# the file alone with the demo's --hang-after (3 s).
ok "one kept result per workload" test "$(ls "$TMP"/results/*.jsonl | wc -l)" -eq 7
for w in $(jq -r '.workloads[].workload' "$TMP/demo.json"); do
	f=$TMP/results/$w.jsonl
	ok "$w: kept in $(basename "$f")" test -s "$f"
	live=$(jq -r --arg w "$w" '.workloads[] | select(.workload == $w) | "\(.verdict.class) \(.verdict.since_s)"' "$TMP/demo.json")
	again=$(gp report --format json --hang-after 3 "$f" | jq -r '.results[0].verdict | "\(.class) \(.since_s)"')
	ok "$w: report judges it again as '$again', the demo said '$live'" \
		awk -v a="$live" -v b="$again" 'BEGIN { split(a, x, " "); split(b, y, " ")
			d = x[2] - y[2]; if (d < 0) d = -d
			exit !(x[1] == y[1] && x[1] != "" && x[1] != "null" && d < 0.01) }'
done
pass
