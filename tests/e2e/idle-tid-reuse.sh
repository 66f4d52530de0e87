#!/bin/sh
# idle keys its per-thread counters by (tid, starttime) (issue 18 #9): a
# thread that spins 1.2 s and exits, then a sleeper that takes its tid
# (the HSA double's GPUPROBE_FAKE_HSA_TID_REUSE, through ns_last_pid in a
# PID namespace of our own).  Keyed by tid alone the two were one thread
# whose counters went backwards: a phantom spinner of absurd CPU% (the
# sleeper's run time minus the spinner's, unsigned), then ptraced for its
# stack.  Now: two threads, the spinner's share a real one, the sleeper
# neither a spinner nor stopped, and a spinner gone by the end not unwound
# (its tid is someone else's by then).
E2E_TIMEOUT=60
. "${0%/*}/lib.sh"
require_jq
A=$top_builddir/tests/gpu/libhsa-runtime64.so.1
[ -f "$A" ] || framework_failure "the HSA double is not built"
command -v unshare >/dev/null 2>&1 || skip "unshare(1) is missing"
# A PID namespace of our own: as root directly, else in a user namespace.
NS="unshare --pid --fork --mount-proc"
$NS true 2>/dev/null || NS="unshare --user --map-root-user --pid --fork --mount-proc"
$NS true 2>/dev/null || skip "no PID namespace of our own (unshare -Upfr refused)"

export GPUPROBE_FAKE_HSA_TID_REUSE=1.2 GPUPROBE_FAKE_HSA_LOG="$TMP/hsa.log"
timeout -k 2 30 $NS sh -c '"$1" idle --lib "$2" --seconds 3 --interval 0.5 --format json -o "$3/r.jsonl" > "$3/v.json" 2> "$3/err"' \
	sh "$GPUPROBE" "$A" "$TMP"
rc=$?
cat "$TMP/err"
grep "tid reuse" "$TMP/hsa.log" | sed "s/^/$ME: double: /"
tid=$(sed -n 's/^tid reuse: \([0-9][0-9]*\)$/\1/p' "$TMP/hsa.log")
[ -n "$tid" ] || skip "the double could not reuse the tid ($(grep 'tid reuse' "$TMP/hsa.log"))"
ok "exit 0 ($rc)" test "$rc" -eq 0
say "spinners: $(jq -c '[.spinning_threads[] | {tid, cpu_pct, state, frames: (.frames != null)}]' "$TMP/v.json")"
say "threads: $(jq -r .threads_total "$TMP/v.json")"
ok "no thread over 120% of a CPU" \
	sh -c "jq -e '[.spinning_threads[].cpu_pct] | all(. <= 120)' '$TMP/v.json' >/dev/null"
ok "tid $tid: one spinner at most (the one that spun, not the sleeper)" \
	sh -c "jq -e --argjson t $tid '[.spinning_threads[] | select(.tid == \$t)] | length <= 1' '$TMP/v.json' >/dev/null"
ok "tid $tid: the spinner that exited was not unwound (frames null)" \
	sh -c "jq -e --argjson t $tid '[.spinning_threads[] | select(.tid == \$t) | .frames] | all(. == null)' '$TMP/v.json' >/dev/null"
ok "tid $tid: never stopped for a stack (no stacks line names it)" \
	sh -c "jq -e -s --argjson t $tid '[.[] | select(.type == \"stacks\") | .threads[] | select(.tid == \$t)] | length == 0' '$TMP/r.jsonl' >/dev/null"
"$GPUPROBE" report --format jsonl "$TMP/r.jsonl" > "$TMP/full.jsonl" # format 3's references resolved
ok "two threads counted under tid $tid: the spinner's and the sleeper's" \
	sh -c "jq -e -s --argjson t $tid '[.[] | select(.type == \"sample\") | .threads[] | select(.tid == \$t) | .starttime] | unique | length == 2' '$TMP/full.jsonl' >/dev/null"
pass
