#!/bin/sh
# A thread busy in user space: cpu_pct >= 50 and state R in the later
# samples, and the summary names it as the busiest thread.  (cpu_pct is
# exact schedstat run time: on a 2-core machine running other tests in
# parallel a spinner really gets 75-99% of a core, so 50 is the bar.)
. "${0%/*}/lib.sh"
require_jq
require_workload spin
F=$TMP/t.jsonl

gp trace --interval 0.5 --seconds 3 -o "$F" -- "$WORKLOADS/spin" 1 > "$TMP/out" 2> "$TMP/err"
rc=$?
cat "$TMP/out"
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
pid=$(jq -r 'select(.type == "target") | .pid' "$F")
say "spinner pid $pid"
# Samples from t >= 1 s on: the spinner's start-up is behind them.
jq -r --argjson p "$pid" 'select(.type == "sample" and .t >= 0.9)
	| "\(.t) \(.threads[] | select(.tid == $p) | "\(.cpu_pct) \(.state)")"' "$F" > "$TMP/rows"
sed "s/^/$ME:   t cpu_pct state: /" "$TMP/rows"
ok "at least 3 later samples" test "$(wc -l < "$TMP/rows")" -ge 3
while read -r t cpu state; do
	ok "t=$t: cpu_pct $cpu >= 50" fcmp "$cpu" '>=' 50
	ok "t=$t: state $state is R" test "$state" = R
done < "$TMP/rows"
ok "summary names thread $pid (spin) as the busiest" \
	grep -q "busiest *thread $pid (spin)" "$TMP/out"
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'time limit'" test "$ex" = "time limit"
pass
