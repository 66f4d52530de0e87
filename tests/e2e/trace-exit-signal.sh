#!/bin/sh
# A traced command killed by SIGKILL from outside: the exit line says signal 9.
. "${0%/*}/lib.sh"
require_jq
F=$TMP/t.jsonl

trace_spin 0.2
say "command pid $pid; kill -KILL $pid after 1 s"
sleep 1
kill -KILL "$pid" || framework_failure "cannot kill $pid"
gp_done() { ! kill -0 $GP 2>/dev/null; }
wait_until 3 gp_done || fail "gpuprobe still running 3 s after its command died"
wait $GP; rc=$?
ok "gpuprobe exit code $rc is 0" test $rc -eq 0
ok "valid JSON Lines" check_jsonl "$F"
exit_is "$F" 'status, signal, reason' '{"status":null,"signal":9,"reason":"exited"}'
pass
