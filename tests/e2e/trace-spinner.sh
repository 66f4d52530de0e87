#!/bin/sh
# A thread busy in user space: state R in the later samples, a CPU share
# that is clearly a spinner's, the same share by two kernel counters, and
# the summary names it as the busiest thread.
# How much of a CPU the spinner gets depends on what else runs: under
# `make -j2 check` on 2 CPUs beside the fuzz pass it got 0.44 of a core
# (per half-second sample, 40-52%).  So the absolute bar is low (20%)
# and the accuracy check is relative: cpu_pct (schedstat run time, exact)
# must agree with utime+stime (stat's clock ticks) over the same window.
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
	| "\(.t) \(.threads[] | select(.tid == $p) | "\(.cpu_pct) \(.state) \(.utime + .stime)")"' "$F" > "$TMP/rows"
sed "s/^/$ME:   t cpu_pct state cpu_s: /" "$TMP/rows"
ok "at least 3 later samples" test "$(wc -l < "$TMP/rows")" -ge 3
while read -r t cpu state cpus; do
	ok "t=$t: state $state is R" test "$state" = R
done < "$TMP/rows"
# Mean cpu_pct of samples 2..n against the tick counters' share from
# sample 1 to n (the same window).
read -r mean ticks <<EOF2
$(awk 'NR == 1 { t0 = $1; c0 = $4; next } { s += $2; n++; t = $1; c = $4 }
	END { printf "%.1f %.1f", n ? s / n : 0, (t > t0) ? 100 * (c - c0) / (t - t0) : 0 }' "$TMP/rows")
EOF2
say "mean cpu_pct $mean; utime+stime over the same window: $ticks%"
ok "mean cpu_pct $mean >= 20 (a spinner)" fcmp "$mean" '>=' 20
ok "cpu_pct agrees with utime+stime within 10 points ($mean vs $ticks)" \
	awk -v a="$mean" -v b="$ticks" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 10) }'
ok "summary names thread $pid (spin) as the busiest" \
	grep -q "busiest *thread $pid (spin)" "$TMP/out"
ex=$(jq -r 'select(.type == "exit") | .reason' "$F")
ok "reason '$ex' is 'time limit'" test "$ex" = "time limit"
pass
