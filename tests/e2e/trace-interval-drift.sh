#!/bin/sh
# --interval 0.1 --seconds 3: about 30 samples, each near its slot k*0.1,
# and no accumulated drift (absolute deadlines).
. "${0%/*}/lib.sh"
require_jq
require_workload sleepers
F=$TMP/t.jsonl

gp trace -q --interval 0.1 --seconds 3 -o "$F" -- "$WORKLOADS/sleepers" 2 > "$TMP/out" 2> "$TMP/err"
rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
jq -r 'select(.type == "sample") | .t' "$F" > "$TMP/t"
n=$(wc -l < "$TMP/t")
late=$(jq -r 'select(.type == "exit") | .late_ticks' "$F")
say "samples $n, late ticks $late, first t $(head -n 1 "$TMP/t"), last t $(tail -n 1 "$TMP/t")"
# A tick the box made late is skipped and counted (late_ticks), not
# sampled late: slots taken are samples plus late ticks.
ok "about 30 slots ($n samples + $late late ticks in 28..32)" \
	test $((n + late)) -ge 28 -a $((n + late)) -le 32
ok "most ticks sampled ($n >= 20)" test "$n" -ge 20
awk -v me="$ME" '{ k = int($1 / 0.1 + 0.5); d = $1 - k * 0.1; if (d < 0) d = -d
	if (d > 0.05) { printf "%s:   sample %d t %.4f is %.4f s off slot %d\n", me, NR, $1, d, k; bad = 1 } }
	END { exit bad }' "$TMP/t" > "$TMP/off"
cat "$TMP/off"
ok "every t within 0.05 s of a slot k*0.1" test ! -s "$TMP/off"
last=$(tail -n 1 "$TMP/t")
slot=$(( n - 1 + late ))
ok "last t $last within 0.05 s of its slot $slot*0.1 (n-1+late)" \
	awk -v t="$last" -v s="$slot" 'BEGIN { d = t - s * 0.1; if (d < 0) d = -d; exit !(d <= 0.05) }'
samp=$(jq -r 'select(.type == "exit") | .sampler | "\(.cpu_s) \(.runq_wait_s)"' "$F")
ok "the exit line says the sampler's CPU and run-queue wait ($samp)" \
	awk -v s="$samp" 'BEGIN { split(s, a, " "); exit !(a[1] > 0 && a[1] < 3 && a[2] >= 0 && a[2] < 3) }'
ok "slots strictly increase" awk 'NR > 1 && int($1 / 0.1 + 0.5) <= p { exit 1 } { p = int($1 / 0.1 + 0.5) }' "$TMP/t"
pass
