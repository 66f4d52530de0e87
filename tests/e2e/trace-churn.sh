#!/bin/sh
# Threads created and destroyed at ~200/s while sampled at 10 Hz: no
# crash, exit 0, valid samples; the vanish/reuse totals are reported.
. "${0%/*}/lib.sh"
require_jq
require_workload sleepers
F=$TMP/t.jsonl

gp trace -q --interval 0.1 --seconds 3 -o "$F" -- "$WORKLOADS/sleepers" 8 --churn 200 \
	> "$TMP/out" 2> "$TMP/err"
rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
n=$(count sample "$F")
# A tick the loaded box made late is skipped and counted (late_ticks), not
# taken late: 10 Hz for 3 s is samples plus late ticks.
late=$(jq -r 'select(.type == "exit") | .late_ticks // 0' "$F")
ok "ticks: $n samples + $late late >= 25" test $((n + late)) -ge 25
ok "samples: $n >= 15" test "$n" -ge 15
# Threads that did not run are references (format 3): resolved first.
gp report --format jsonl "$F" > "$TMP/full.jsonl"
ok "report --format jsonl reads it" test -s "$TMP/full.jsonl"
bad=$(jq -r 'select(.type == "sample")
	| select((.threads | type) != "array" or (.threads | length) < 1
		 or any(.threads[]; (.tid | type) != "number" or (.state | type) != "string"))
	| .t' "$TMP/full.jsonl")
ok "every sample has threads with tid and state" test -z "$bad"
max=$(jq -s '[.[] | select(.type == "sample") | .threads | length] | max' "$TMP/full.jsonl")
ok "churn seen: up to $max threads in a sample (> 9)" test "$max" -gt 9
ex=$(jq -c 'select(.type == "exit") | {reason, threads_vanished, tids_reused, late_ticks}' "$F")
say "exit line: $ex"
ok "reason time limit" test "$(printf '%s' "$ex" | jq -r .reason)" = "time limit"
ok "totals are numbers" test "$(printf '%s' "$ex" | jq '(.threads_vanished|type) + (.tids_reused|type)')" = '"numbernumber"'
pass
