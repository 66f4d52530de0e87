#!/bin/sh
# A thread busy in user space: state R in the later samples, cpu_pct
# >= 50 on their mean and >= 20 in each, and the summary names it as the
# busiest thread.  (cpu_pct is exact schedstat run time: on a 2-core
# machine running other tests in parallel a spinner gets 75-99% of a core
# on average, but a half-second sample under ASan and a parallel build
# measured 44%: one sample is the scheduler's, the mean is the spinner's.)
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
mean=$(awk '{ s += $2; n++ } END { printf "%.1f", n ? s / n : 0 }' "$TMP/rows")
ok "mean cpu_pct $mean >= 50" fcmp "$mean" '>=' 50
while read -r t cpu state; do
	ok "t=$t: cpu_pct $cpu >= 20" fcmp "$cpu" '>=' 20
	ok "t=$t: state $state is R" test "$state" = R
done < "$TMP/rows"
ok "summary names thread $pid (spin) as the busiest" \
	grep -q "busiest *thread $pid (spin)" "$TMP/out"
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'time limit'" test "$ex" = "time limit"
pass
