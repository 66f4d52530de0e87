#!/bin/sh
# Fds (issue 18): 600 sleeping threads traced under a hard limit of 300
# fds.  gpuprobe keeps /proc files open within a budget (tasks.c) and
# never runs out: every sample holds all 601 threads, none "vanished",
# and gpuprobe's own fd count stays under the limit.  Before, the first
# EMFILE dropped a thread from its sample (the verdict read it as a
# thread created: "progress") and the fds already kept stayed pinned.
. "${0%/*}/../e2e/lib.sh"
require_jq
require_workload sleepers
command -v prlimit > /dev/null 2>&1 || skip "prlimit missing (util-linux)"
"$WORKLOADS/sleepers" 600 & T=$!; bg_track $T
full() { [ "$(ls /proc/$T/task | wc -l)" -ge 601 ]; }
wait_until 10 full || framework_failure "sleepers did not start 600 threads"
prlimit --nofile=300:300 "$GPUPROBE" trace -q --seconds 3 --interval 0.5 -o "$TMP/t.jsonl" "$T" \
	> /dev/null 2> "$TMP/err" &
G=$!
sleep 2
fds=$(ls /proc/$G/fd 2>/dev/null | wc -l)
wait $G
rc=$?
ok "exit 0 (got $rc)" [ $rc -eq 0 ]
ok "gpuprobe's fds stayed under the limit of 300 (had $fds at +2 s)" [ "$fds" -lt 300 ]
# Format 3 writes a thread that has not run as a reference to its last
# record: report --format jsonl resolves them, so every thread is counted.
"$GPUPROBE" report --format jsonl "$TMP/t.jsonl" > "$TMP/full.jsonl"
counts=$(jq -r 'select(.type=="sample") | .threads | length' "$TMP/full.jsonl" | sort -u | tr '\n' ' ')
ok "every sample holds all 601 threads (counts: $counts)" [ "$counts" = "601 " ]
v=$(jq -r 'select(.type=="exit") | .threads_vanished' "$TMP/t.jsonl")
ok "no thread vanished (threads_vanished $v)" [ "$v" = 0 ]
pass
