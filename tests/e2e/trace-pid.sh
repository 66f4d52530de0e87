#!/bin/sh
# Tracing an existing PID for --seconds 2: reason "time limit", and the
# target is never signalled (still alive after).
. "${0%/*}/lib.sh"
require_jq
require_workload spin
F=$TMP/t.jsonl

"$WORKLOADS/spin" 1 &
pid=$!; bg_track $pid
t0=$(now)
gp trace -q --interval 0.5 --seconds 2 -o "$F" "$pid" > "$TMP/out" 2> "$TMP/err"
rc=$?
say "gpuprobe exited $rc after $(elapsed "$t0") s"
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
tg=$(jq -c 'select(.type == "target") | {pid, how}' "$F")
ok "target $tg" test "$tg" = "{\"pid\":$pid,\"how\":\"pid\"}"
ex=$(jq -c 'select(.type == "exit") | {reason, status, signal}' "$F")
say "exit line: $ex"
ok "reason time limit, no status" test "$ex" = '{"reason":"time limit","status":null,"signal":null}'
ok "the time limit held (elapsed < 3.5 s)" fcmp "$(elapsed "$t0")" '<' 3.5
ok "target $pid still alive" alive "$pid"
kill -KILL $pid
pass
