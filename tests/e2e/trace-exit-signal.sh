#!/bin/sh
# A traced command killed by SIGKILL from outside: the exit line says signal 9.
. "${0%/*}/lib.sh"
require_jq
require_workload spin
F=$TMP/t.jsonl

"$GPUPROBE" trace -q --interval 0.2 -o "$F" -- "$WORKLOADS/spin" 1 > "$TMP/out" 2>&1 &
GP=$!; bg_track $GP
wait_target "$F"
say "command pid $pid; kill -KILL $pid after 1 s"
bg_track "$pid"
sleep 1
kill -KILL "$pid" || framework_failure "cannot kill $pid"
gp_done() { ! kill -0 $GP 2>/dev/null; }
wait_until 3 gp_done || fail "gpuprobe still running 3 s after its command died"
wait $GP; rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
ex=$(jq -c 'select(.type == "exit") | {status, signal, reason}' "$F")
say "exit line: $ex"
ok "exit: status null, signal 9, reason exited" \
	test "$ex" = '{"status":null,"signal":9,"reason":"exited"}'
pass
